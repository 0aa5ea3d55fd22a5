import { join } from 'node:path';
import { systemClock } from '@trellis/core';
import { IdempotentTriggers, type IdempotencyJournal } from '@trellis/services';
import { FsIdempotencyJournal } from '@trellis/store';
import type { Runtime } from './runtime.js';

/**
 * The server's idempotency keys (`Idempotency-Key` on start and enqueue): with the PostgreSQL
 * store, in `trellis_idempotency_keys`, shared by every instance behind the load balancer (a
 * retry reaching another instance gets the same run); else under `<dataDir>/idempotency`.
 */
export const idempotentTriggers = async (rt: Runtime): Promise<IdempotentTriggers> => {
  let journal: IdempotencyJournal;
  if (rt.database) {
    const { PgIdempotencyJournal } = await import('@trellis/store-pg');
    journal = new PgIdempotencyJournal({ db: rt.database });
  } else {
    journal = new FsIdempotencyJournal({
      dir: join(rt.config.paths.dataDir, 'idempotency'),
      clock: systemClock,
    });
  }
  return new IdempotentTriggers({ journal, clock: systemClock });
};
