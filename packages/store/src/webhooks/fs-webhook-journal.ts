import { mkdir, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { WebhookDelivery, WebhookJournal } from '@trellis/services';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { isMissing } from '../fs/fs-errors.js';

/** A delivery id as the service makes them (a UUID); anything else is not a file name here. */
const SAFE_ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Webhook deliveries on disk (docs/decisions.md, "Webhooks"): one JSON file per delivery under
 * `<dataDir>/webhooks`, replaced atomically and synced after every attempt, so a restart resumes
 * every pending delivery where it was. A file that does not parse (a crash cannot make one, a
 * hand edit can) is skipped with a warning, never fatal.
 */
export class FsWebhookJournal implements WebhookJournal {
  constructor(
    private readonly opts: { readonly dir: string; readonly warn: (m: string) => void },
  ) {}

  #path(id: string): string {
    if (!SAFE_ID.test(id)) throw new Error(`webhook delivery id "${id}" is not a UUID`);
    return join(this.opts.dir, `${id}.json`);
  }

  async loadAll(): Promise<WebhookDelivery[]> {
    const names = await readdir(this.opts.dir).catch((e: unknown) => {
      if (isMissing(e)) return [];
      throw e;
    });
    const out: WebhookDelivery[] = [];
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const path = join(this.opts.dir, name);
      try {
        out.push(JSON.parse(await readFile(path, 'utf8')) as WebhookDelivery);
      } catch (e) {
        if (!isMissing(e))
          this.opts.warn(`webhook journal: skipping ${path}: ${(e as Error).message}`);
      }
    }
    return out;
  }

  async save(delivery: WebhookDelivery): Promise<void> {
    const path = this.#path(delivery.id);
    await mkdir(this.opts.dir, { recursive: true });
    await writeFileAtomic(path, JSON.stringify(delivery));
  }

  async remove(id: string): Promise<void> {
    await unlink(this.#path(id)).catch((e: unknown) => {
      if (!isMissing(e)) throw e;
    });
  }
}
