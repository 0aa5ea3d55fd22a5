import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataDirProblem } from './writable-probe.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'trellis-health-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('dataDirProblem', () => {
  it('has none for a writable data directory, and leaves no file', async () => {
    expect(await dataDirProblem(dir)).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it('names the data directory when it cannot be written', async () => {
    const notADir = path.join(dir, 'file');
    await writeFile(notADir, 'x');
    for (const dataDir of [path.join(dir, 'missing'), notADir]) {
      expect(await dataDirProblem(dataDir)).toMatch(
        new RegExp(`^data directory ${dataDir} is not writable \\((ENOENT|ENOTDIR): `),
      );
    }
  });
});
