import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { makeRecord } from '@trellis/testkit';
import { openRunStore } from '../../test/support/run-store-fixture.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-listener-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a listener of saved records that throws', () => {
  it('fails no save or swap that landed: the record and its index line are in, and it is told', async () => {
    const { store, warnings } = openRunStore(dir, (r) => {
      if (r.status !== RunStatus.Running) throw new Error('subscriber gone');
    });
    const rec = makeRecord({ status: RunStatus.Running });
    await store.createRun(rec, { dag: { name: rec.name, steps: [] }, localDags: [] });
    await store.saveRun({ ...rec, revision: 1, status: RunStatus.Failed });
    await expect(
      store.saveRunIf({ ...rec, revision: 2, status: RunStatus.Succeeded }, 1),
    ).resolves.toBe(true);
    expect((await store.getRun(rec)).status).toBe(RunStatus.Succeeded);
    const [listed] = await store.listRuns({ name: rec.name });
    expect(listed?.status).toBe(RunStatus.Succeeded);
    expect(warnings.filter((w) => w.includes('subscriber gone'))).toHaveLength(2);
  });
});
