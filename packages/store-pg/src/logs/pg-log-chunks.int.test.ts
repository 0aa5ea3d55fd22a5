import { describe, expect, it } from 'vitest';
import type { PgDb } from '../db/pg-db.js';
import { useMigratedPg } from '../../test/support/migrated-pg.js';
import { PgLogChunkWriter } from './pg-log-chunks.js';
import { PgLogs } from './pg-logs.js';

/** Two instances' pools on one migrated database. */
const pools = useMigratedPg({ pools: 2 });

const writer = (db: PgDb, warnings: string[] = []) =>
  new PgLogChunkWriter(new PgLogs(db), {
    logDir: '/logs',
    runLogOf: () => Promise.resolve('/own/job/r1/run.log'),
    warn: (m) => warnings.push(m),
  });

describe('PgLogChunkWriter (two coordinators on one database)', () => {
  it('applies every byte once, whichever writer gets a chunk again', async () => {
    const a = writer(pools.db(0));
    const b = writer(pools.db(1));
    const path = '/logs/job/r1/s.out';
    const first = Buffer.from('one\ntwo\nthr');
    expect(await a.apply(path, 0, first)).toBe(first.length);
    // a died before its answer: the worker sends the same chunk, and more, to b
    expect(await b.apply(path, 0, first)).toBe(first.length);
    const rest = Buffer.from('ee\r\nfour\n');
    const both = Buffer.concat([first.subarray(4), rest]);
    expect(await b.apply(path, 4, both)).toBe(first.length + rest.length);
    expect(await a.apply(path, first.length, rest)).toBe(first.length + rest.length);
    expect(await b.sizeOf(path)).toBe(first.length + rest.length);
    const read = await new PgLogs(pools.db(0)).read(path, { head: 10 });
    expect(read).toMatchObject({ content: 'one\ntwo\nthree\nfour', totalLines: 4 });
  });

  it('says when bytes are missing before a chunk, and accepts only its folders', async () => {
    const warnings: string[] = [];
    const a = writer(pools.db(0), warnings);
    expect(await a.apply('/logs/job/r2/s.out', 5, Buffer.from('x\n'))).toBe(7);
    expect(warnings).toEqual(['log /logs/job/r2/s.out: 5 bytes missing before offset 5']);
    const run = { name: 'job', dagRunId: 'r1' };
    expect(await a.accepts('/logs/job/r1/s.out', run, run)).toBe(true);
    expect(await a.accepts('/own/job/r1/s.out', run, run)).toBe(true);
    expect(await a.accepts('/etc/passwd', run, run)).toBe(false);
    expect(await a.accepts('/own/job/r1/s.out', undefined, undefined)).toBe(false);
  });

  it('counts the bytes of lines appended by a recorder too', async () => {
    const logs = new PgLogs(pools.db(0));
    await logs.append('/logs/job/r3/run.log', 'héllo\nwor');
    expect(await logs.bytesOf('/logs/job/r3/run.log')).toBe(Buffer.byteLength('héllo\nwor'));
    expect(await writer(pools.db(1)).apply('/logs/job/r3/run.log', 10, Buffer.from('ld\n'))).toBe(
      13,
    );
    expect(await logs.read('/logs/job/r3/run.log', { head: 5 })).toMatchObject({
      content: 'héllo\nworld',
    });
  });
});
