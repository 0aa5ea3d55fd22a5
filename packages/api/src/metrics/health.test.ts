import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHealthProbe } from './health.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'trellis-health-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createHealthProbe', () => {
  it('is healthy with a writable data directory and a live scheduler, and leaves no file', async () => {
    const probe = createHealthProbe({ dataDir: dir, schedulerAlive: () => true });
    expect(await probe()).toEqual({});
    expect(await readdir(dir)).toEqual([]);
  });

  it('is healthy without a scheduler to ask', async () => {
    expect(await createHealthProbe({ dataDir: dir })()).toEqual({});
  });

  it('names the data directory when it cannot be written', async () => {
    const notADir = path.join(dir, 'file');
    await writeFile(notADir, 'x');
    for (const dataDir of [path.join(dir, 'missing'), notADir]) {
      const verdict = await createHealthProbe({ dataDir })();
      expect(verdict.error).toMatch(
        new RegExp(`^data directory ${dataDir} is not writable \\((ENOENT|ENOTDIR): `),
      );
    }
  });

  it('names the scheduler when it does not answer, or its check throws', async () => {
    expect(await createHealthProbe({ dataDir: dir, schedulerAlive: () => false })()).toEqual({
      error: 'the scheduler is not responding',
    });
    const throwing = () => {
      throw new Error('gone');
    };
    expect((await createHealthProbe({ dataDir: dir, schedulerAlive: throwing })()).error).toBe(
      'the scheduler is not responding',
    );
  });

  it('reports both failures together', async () => {
    const verdict = await createHealthProbe({
      dataDir: path.join(dir, 'missing'),
      schedulerAlive: () => false,
    })();
    expect(verdict.error).toMatch(/is not writable .*; the scheduler is not responding$/);
  });
});
