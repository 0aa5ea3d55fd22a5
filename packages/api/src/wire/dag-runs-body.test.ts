import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { dagRunsBody, DagRunsBodyCache } from './dag-runs-body.js';

const ORDER = ['extract', 'load'];
const key = (stamp: string | undefined, stepOrder = ORDER) => ({
  stamp,
  dagName: 'etl',
  stepOrder,
});
const body = (status: RunStatus = RunStatus.Succeeded) =>
  dagRunsBody(ORDER, [makeRecord({ status })]);

describe('DagRunsBodyCache', () => {
  it('answers a kept body only under the same stamp, DAG name and step order', () => {
    const c = new DagRunsBodyCache();
    const made = c.put('etl.yaml', key('s1'), body());
    expect(c.get('etl.yaml', key('s1'))).toMatchObject({ body: made.body, etag: made.etag });
    expect(c.get('etl.yaml', key('s2'))).toBeUndefined();
    expect(c.get('etl.yaml', key('s1', ['load', 'extract']))).toBeUndefined();
    expect(c.get('etl.yaml', { ...key('s1'), dagName: 'renamed' })).toBeUndefined();
    expect(c.get('other.yaml', key('s1'))).toBeUndefined();
  });

  it('keeps nothing without a stamp', () => {
    const c = new DagRunsBodyCache();
    c.put('etl.yaml', key('s1'), body());
    c.put('etl.yaml', key(undefined), body());
    expect(c.size).toBe(0);
    expect(c.get('etl.yaml', key(undefined))).toBeUndefined();
  });

  it('tags bodies as Express does, and keeps a tag while the bytes are the same', () => {
    const c = new DagRunsBodyCache();
    const a = c.put('etl.yaml', key('s1'), body());
    expect(a.etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
    expect(a.etag.startsWith(`W/"${a.body.length.toString(16)}-`)).toBe(true);
    expect(c.put('etl.yaml', key('s2'), body()).etag).toBe(a.etag);
    expect(c.put('etl.yaml', key('s3'), body(RunStatus.Failed)).etag).not.toBe(a.etag);
  });

  it('keeps at most its bound, the least recently answered going first', () => {
    const c = new DagRunsBodyCache(2);
    c.put('a', key('s'), body());
    c.put('b', key('s'), body());
    c.get('a', key('s'));
    c.put('c', key('s'), body());
    expect(c.size).toBe(2);
    expect(c.get('b', key('s'))).toBeUndefined();
    expect(c.get('a', key('s'))).toBeDefined();
  });

  it('makes an answer again once it is older than its bound, under the same stamp', () => {
    let now = 0;
    const c = new DagRunsBodyCache(2, 1000, () => now);
    c.put('a', key('s'), body());
    now = 999;
    expect(c.get('a', key('s'))).toBeDefined();
    now = 1000;
    expect(c.get('a', key('s'))).toBeUndefined();
  });

  it('keeps at most its byte budget, and never a body over it', () => {
    const b = body();
    const c = new DagRunsBodyCache(64, 30_000, () => 0, b.length * 2 + 400);
    c.put('a', key('s'), b);
    c.put('b', key('s'), b);
    c.put('c', key('s'), b);
    expect(c.size).toBe(2);
    expect(c.bytes).toBeLessThanOrEqual(b.length * 2 + 400);
    expect(c.get('a', key('s'))).toBeUndefined();
    const small = new DagRunsBodyCache(64, 30_000, () => 0, b.length - 1);
    expect(small.put('a', key('s'), b).body.equals(b)).toBe(true); // answered, not kept
    expect(small.size).toBe(0);
  });
});
