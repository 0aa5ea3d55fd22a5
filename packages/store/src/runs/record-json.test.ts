import { describe, expect, it } from 'vitest';
import { parseDagFile, type DagRunRecord } from '@trellis/spec';
import { makeRunRecord } from '@trellis/testkit';
import { recordText } from './record-json.js';

/** The record's whole JSON text, as the parts a save writes give it. */
const recordJson = (r: DagRunRecord): string => Buffer.concat(recordText(r).parts).toString('utf8');

const record = (steps: number): DagRunRecord => {
  const yaml = `steps:\n${Array.from({ length: steps }, (_, i) => `  - {name: s${i}, command: "true"}`).join('\n')}\n`;
  const parsed = parseDagFile(yaml, { location: '/tmp/d.yaml', cwd: '/tmp' });
  if (!parsed.valid) throw new Error(parsed.errors.join('\n'));
  const r = makeRunRecord(parsed.main.dag);
  r.nodes = parsed.main.dag.steps.map((step) => ({
    step,
    stdout: '',
    stderr: '',
    startedAt: '',
    finishedAt: '',
    status: 0,
    retryCount: 0,
    doneCount: 0,
    retriedAt: '',
    children: [],
    childrenRepeated: [],
    error: '',
    outputs: {},
  }));
  return r;
};

/** What the store wrote before: JSON.stringify with revision first. */
const plain = (r: DagRunRecord): string =>
  JSON.stringify(Object.assign({ revision: r.revision }, r));

describe('recordJson', () => {
  it('writes what JSON.stringify writes, revision first', () => {
    const r = record(3);
    r.revision = 7;
    expect(recordJson(r)).toBe(plain(r));
    expect(recordJson(r).startsWith('{"revision":7,')).toBe(true);
  });

  it('follows every change of a node between saves: fields set, added, deleted, values replaced', () => {
    const r = record(3);
    recordJson(r);
    const n = r.nodes[1]!;
    n.status = 1;
    n.startedAt = '2026-01-01T00:00:00.000Z';
    expect(JSON.parse(recordJson(r))).toEqual(JSON.parse(plain(r)));
    n.pid = 42;
    expect(recordJson(r)).toBe(plain(r));
    delete n.pid;
    n.outputs = { ...n.outputs, OUT: 'x' };
    n.step = { ...n.step, description: 'changed' };
    expect(recordJson(r)).toBe(plain(r));
    r.nodes = [...r.nodes, ...record(1).nodes];
    r.status = 4;
    expect(recordJson(r)).toBe(plain(r));
  });

  it('leaves out what JSON leaves out (undefined values at the top)', () => {
    const r = record(1) as DagRunRecord & { extra?: string | undefined };
    r.extra = undefined;
    expect(recordJson(r)).toBe(plain(r));
  });

  it('gives a copy of the record as saved, which later changes of the record do not reach', () => {
    const r = record(3);
    r.revision = 2;
    recordText(r); // the nodes' text is cached
    r.nodes[0]!.status = 4;
    const text = recordText(r);
    r.nodes[0]!.status = 2;
    r.status = 2;
    const copy = text.copy();
    expect(copy.nodes[0]?.status).toBe(4);
    r.nodes[0]!.status = 4;
    r.status = 0;
    expect(copy).toEqual(JSON.parse(plain(r)));
    expect(Buffer.concat(text.parts).toString()).toBe(plain(r));
  });
});
