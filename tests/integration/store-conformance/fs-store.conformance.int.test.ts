import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { FsRunStore } from '@trellis/store';
import { describeRunStoreConformance, fixedClock } from './run-store-conformance.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describeRunStoreConformance('file store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-conformance-'));
  dirs.push(dir);
  const open = (): FsRunStore =>
    new FsRunStore({ dataDir: join(dir, 'data'), logDir: join(dir, 'logs'), clock: fixedClock });
  return Promise.resolve({ store: open(), another: open });
});
