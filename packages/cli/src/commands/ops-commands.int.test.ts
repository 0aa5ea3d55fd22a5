import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliIn } from '../../test/support/cli-in.js';

let dir: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-ops-cli-'));
  home = join(dir, 'home');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]) => cliIn(dir, args);

/** A 1.16.x history file: JSON lines with capitalised keys, the last line current. */
const legacyRun = (dataDir: string, dag: string, id: string, status: number): void => {
  const folder = join(dataDir, `${dag}-0a1b2c`);
  mkdirSync(folder, { recursive: true });
  const line = {
    RequestId: id,
    Name: dag,
    Status: status,
    Nodes: [
      {
        Step: { Name: 'hello', CmdWithArgs: 'echo hello' },
        Log: '',
        Status: status === 0 ? 0 : 4,
        StartedAt: '2024-05-01T10:00:00Z',
        FinishedAt: '2024-05-01T10:00:02Z',
      },
    ],
    StartedAt: '2024-05-01T10:00:00Z',
    FinishedAt: '2024-05-01T10:00:02Z',
    Log: '',
    ParamsList: [],
  };
  writeFileSync(
    join(folder, `${dag}.20240501.10:00:00.000Z.${id.slice(0, 8)}.dat`),
    `${JSON.stringify({ ...line, Status: 1 })}\n${JSON.stringify(line)}\n`,
  );
};

describe('trellis migrate history', () => {
  it('imports the 1.16 history of the data folder, archives it, and says what it did', async () => {
    const data = join(home, 'data');
    legacyRun(data, 'greet', 'a1aaaaaa-0000-0000-0000-000000000001', 4);
    legacyRun(data, 'greet', 'a2aaaaaa-0000-0000-0000-000000000002', 2);
    legacyRun(data, 'greet', 'a3aaaaaa-0000-0000-0000-000000000003', 0);

    const dry = await cli(['migrate', 'history', '--dry-run']);
    expect(dry.out).toEqual([
      `found 1 legacy DAG folder(s) in ${data}`,
      'would convert 2 run(s), skipped 1, failed 0',
      '  skipped: 1 never started',
      'dry run: nothing was stored or moved',
    ]);

    const r = await cli(['migrate', 'history']);
    expect(r.code).toBe(0);
    expect(r.out.slice(0, 3)).toEqual([
      `found 1 legacy DAG folder(s) in ${data}`,
      'converted 2 run(s), skipped 1, failed 0',
      '  skipped: 1 never started',
    ]);
    expect(r.out[3]).toMatch(/^moved the legacy folders to .*history_migrated_\d{8}_\d{6}$/);
    expect(readdirSync(data).filter((n) => n.startsWith('history_migrated_'))).toHaveLength(1);

    const status = await cli([
      'status',
      'greet',
      '--run-id',
      'a2aaaaaa-0000-0000-0000-000000000002',
    ]);
    expect(status.code).toBe(1); // status exits 1 for a failed run (issue #17)
    expect(status.out[1]).toBe('run       a2aaaaaa-0000-0000-0000-000000000002 (failed)');

    expect((await cli(['migrate', 'history'])).out).toEqual([
      `no 1.16 run history in ${data} (DAG folders holding .dat files); nothing to do`,
    ]);
  });

  it('lists a corrupt file, keeps the legacy folders and exits 1', async () => {
    const old = join(dir, 'old-data');
    legacyRun(old, 'greet', 'bbbbbbbb-0000-0000-0000-000000000001', 4);
    writeFileSync(join(old, 'greet-0a1b2c', 'greet.20240502.10:00:00.000Z.cccccccc.dat'), '{"Req');
    const r = await cli(['migrate', 'history', '--from', 'old-data']);
    expect(r.code).toBe(1);
    expect(r.out[1]).toBe('converted 1 run(s), skipped 0, failed 1');
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(
      `  failed: ${join(old, 'greet-0a1b2c', 'greet.20240502.10:00:00.000Z.cccccccc.dat')}: corrupt: its last line is not JSON (`,
    );
    expect(readdirSync(old)).toEqual(['greet-0a1b2c']);
  });

  it('refuses a stray argument with exit 2', async () => {
    const r = await cli(['migrate', 'history', '/old/data']);
    expect(r.code).toBe(2);
    expect(r.err[0]).toBe(
      'trellis migrate history: unexpected argument "/old/data"; name the old data folder with --from <dir>',
    );
  });
});

describe('trellis cleanup', () => {
  it('deletes runs older than the given days with their logs', async () => {
    const data = join(home, 'data');
    legacyRun(data, 'greet', 'dddddddd-0000-0000-0000-000000000001', 4);
    legacyRun(data, 'other', 'd2dddddd-0000-0000-0000-000000000002', 4);
    expect((await cli(['migrate', 'history'])).code).toBe(0);
    const r = await cli(['cleanup', '--older-than', '30']);
    expect(r).toMatchObject({
      code: 0,
      out: [
        'deleted 2 run(s) that ended more than 30 day(s) ago, with their child runs and logs (greet: 1, other: 1)',
      ],
    });
    const again = await cli(['status', 'greet']);
    expect(again.code).toBe(1);
    expect(again.err[0]).toBe('trellis status: run not found: greet/latest');
  });

  it.each([
    [[], 'say how much history to keep with --older-than <days>, e.g. --older-than 30'],
    [['--older-than', 'ten'], 'got "ten"; e.g. --older-than 30'],
    [['--older-than=-3'], 'got "-3"; e.g. --older-than 30'],
  ])('refuses %j with exit 2 and says what to write', async (args, message) => {
    const r = await cli(['cleanup', ...args]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toContain(message);
  });
});
