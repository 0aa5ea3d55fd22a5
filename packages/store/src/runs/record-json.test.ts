import { describe, expect, it } from 'vitest';
import type { NodeStatus, RunStatus } from '@trellis/core';
import { parseDagFile, type DagRunRecord, type NodeRecord } from '@trellis/spec';
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

  it('writes the same bytes as JSON.stringify across saves of varied nodes (every status, optional fields, children, outputs)', () => {
    const r = record(8);
    const child = { name: 'sub', dagRunId: 'c-1', params: 'A="1"', status: 1 as RunStatus };
    const check = () =>
      expect(Buffer.concat(recordText(r).parts).equals(Buffer.from(plain(r)))).toBe(true);
    check();
    r.nodes.forEach((n, i) => {
      n.status = (i % 7) as NodeStatus; // every node status (0..6)
      if (i % 2 === 0) n.exitCode = i;
      if (i % 3 === 0) n.pid = 100 + i;
      check();
    });
    const [a, b, c] = r.nodes as [NodeRecord, NodeRecord, NodeRecord];
    a.children = [child];
    b.childrenRepeated = [child, { ...child, dagRunId: 'c-2' }];
    c.outputs = { OUT: 'x "quoted" \u00e9\n', EMPTY: '' };
    check();
    delete a.exitCode; // a key gone, then back at the end of the key order
    check();
    a.exitCode = 0;
    check();
    const d = r.nodes[3]!;
    (d as unknown as Record<string, unknown>)['pid'] = undefined; // present but left out by JSON
    check();
    Object.setPrototypeOf(b, { inherited: 1 }); // an inherited key is not written
    b.error = 'boom';
    check();
    check();
  });

  it("shares in its copies a node's parsed object while the node is unchanged, not after", () => {
    const r = record(3);
    const first = recordText(r).copy();
    r.nodes[1]!.status = 1;
    const second = recordText(r).copy();
    expect(second.nodes[0]).toBe(first.nodes[0]);
    expect(second.nodes[1]).not.toBe(first.nodes[1]);
    expect(second.nodes[1]?.status).toBe(1);
    expect(first.nodes[1]?.status).toBe(0);
    expect(second).toEqual(JSON.parse(plain(r)));
  });
});
