import type * as nodeFs from 'node:fs';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { makeRecord } from '@trellis/testkit';
import { RUN_LOCK, tryLockRun } from './run-lock.js';

const failClose = { on: false };
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof nodeFs>();
  return {
    ...fs,
    closeSync: (f: number): void => {
      fs.closeSync(f);
      if (failClose.on) throw Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' });
    },
  };
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-run-lock-close-'));
});
afterEach(() => {
  failClose.on = false;
  rmSync(dir, { recursive: true, force: true });
});

it('removes the lock file it created when closing it fails, and tells the error', () => {
  failClose.on = true;
  expect(() => tryLockRun(dir, makeRecord())).toThrow(/EIO/);
  failClose.on = false;
  expect(existsSync(join(dir, RUN_LOCK))).toBe(false);
  expect(tryLockRun(dir, makeRecord())).toBeDefined();
});
