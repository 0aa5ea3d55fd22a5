import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '@trellis/services';
import { FsWebhookJournal } from './fs-webhook-journal.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const delivery = (id: string): WebhookDelivery => ({
  id,
  subscription: 'ci',
  eventType: 'run:finished',
  body: '{"type":"run:finished"}',
  createdAtMs: 1,
  state: 'pending',
  attempts: [{ atMs: 2, durationMs: 3, status: 500, error: 'HTTP 500' }],
  nextAttemptAtMs: 4,
});

describe('webhook journal on disk', () => {
  it('keeps one file per delivery, replaced in place, read back by a new journal', async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'trellis-hookj-')), 'webhooks');
    const warnings: string[] = [];
    const j = new FsWebhookJournal({ dir, warn: (m) => warnings.push(m) });
    expect(await j.loadAll()).toEqual([]); // no folder yet
    await j.save(delivery('a-1'));
    await j.save({ ...delivery('a-1'), state: 'delivered' });
    await j.save(delivery('b-2'));
    writeFileSync(join(dir, 'torn.json'), '{"id":'); // a hand edit
    const back = await new FsWebhookJournal({ dir, warn: (m) => warnings.push(m) }).loadAll();
    expect(back.map((d) => [d.id, d.state]).sort()).toEqual([
      ['a-1', 'delivered'],
      ['b-2', 'pending'],
    ]);
    expect(warnings).toEqual([expect.stringMatching(/^webhook journal: skipping .*torn\.json: /)]);
    await j.remove('a-1');
    await j.remove('a-1'); // gone already: fine
    expect(readdirSync(dir).sort()).toEqual(['b-2.json', 'torn.json']);
  });

  it('refuses an id that is not a plain name', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-hookj-'));
    const j = new FsWebhookJournal({ dir, warn: () => undefined });
    await expect(j.save(delivery('../x'))).rejects.toThrow(/"\.\.\/x" is not a UUID/);
  });
});
