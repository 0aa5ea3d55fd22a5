import pg from 'pg';
import type { DagSuspendFlags } from '@trellis/store';
import { toStoreError, type PgDb } from '../db/pg-db.js';

/** The channel migration 005's trigger notifies on every change of the table. */
export const SUSPEND_FLAGS_CHANNEL = 'trellis_dag_suspend_flags';

export interface PgSuspendFlagsOptions {
  /** The store's pool: writes and re-reads. */
  readonly db: PgDb;
  /** `database.url`: the LISTEN connection is its own client, outside the pool. */
  readonly url: string;
  /**
   * How often the table is re-read whatever the notifications say (the safety net for a
   * notification lost while the LISTEN connection was down). @default 1000
   */
  readonly refreshMs?: number;
  readonly warn?: (message: string) => void;
}

const SELECT = 'SELECT file_name FROM trellis_dag_suspend_flags';
const INSERT = `INSERT INTO trellis_dag_suspend_flags (file_name) VALUES ($1)
  ON CONFLICT (file_name) DO NOTHING`;
const DELETE = 'DELETE FROM trellis_dag_suspend_flags WHERE file_name = $1';
const RENAME = `UPDATE trellis_dag_suspend_flags SET file_name = $2 WHERE file_name = $1
  RETURNING file_name`;

/**
 * The suspend flags of the DAG files in the PostgreSQL store (`trellis_dag_suspend_flags`), the
 * same for every instance on the database (docs/decisions.md). `names()` answers from a set in
 * memory: loaded by {@link PgSuspendFlags.open}, updated at once by this instance's writes, and
 * re-read when the table's trigger notifies a change (LISTEN) and every `refreshMs`. Another
 * instance's change is thus seen within moments, and within `refreshMs` if a notification is lost.
 */
export class PgSuspendFlags implements DagSuspendFlags {
  readonly #opts: PgSuspendFlagsOptions;
  #names: ReadonlySet<string> = new Set();
  /** Writes of this instance under way: a re-read begun meanwhile may miss them, and is dropped. */
  #writing = 0;
  /** Bumped when a write ends: a re-read that saw another value may predate it, and is dropped. */
  #writes = 0;
  #reading: Promise<void> | undefined;
  #again = false;
  #listener: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failing = false;
  #closed = false;

  private constructor(opts: PgSuspendFlagsOptions) {
    this.#opts = opts;
  }

  /** Loads the flags (errors: the database unreachable), then keeps them current until closed. */
  static async open(opts: PgSuspendFlagsOptions): Promise<PgSuspendFlags> {
    const flags = new PgSuspendFlags(opts);
    try {
      await flags.#listen();
      await flags.#read();
    } catch (e) {
      await flags.stop();
      throw toStoreError(e);
    }
    flags.#timer = setInterval(() => flags.#tick(), opts.refreshMs ?? 1000);
    flags.#timer.unref();
    return flags;
  }

  names(): ReadonlySet<string> {
    return this.#names;
  }

  has(fileName: string): boolean {
    return this.#names.has(fileName);
  }

  async set(fileName: string, suspended: boolean): Promise<void> {
    await this.#write(async () => {
      await this.#opts.db.query(suspended ? INSERT : DELETE, [fileName]);
      return (names) => (suspended ? names.add(fileName) : names.delete(fileName));
    });
  }

  async move(from: string, to: string): Promise<void> {
    await this.#write(async () => {
      const moved = await this.#opts.db.tx(async (q) => {
        await q.query(DELETE, [to]);
        return (await q.query(RENAME, [from, to])).rowCount === 1;
      });
      return (names) => {
        names.delete(from);
        if (moved) names.add(to);
        else names.delete(to);
      };
    });
  }

  close(): void {
    void this.stop();
  }

  /** Stops the timer and closes the LISTEN connection. */
  async stop(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  /** Runs one SQL change and applies its effect to the set in memory once it is committed. */
  async #write(change: () => Promise<(names: Set<string>) => unknown>): Promise<void> {
    this.#writing++;
    try {
      const apply = await change();
      const names = new Set(this.#names);
      apply(names);
      this.#names = names;
    } finally {
      this.#writing--;
      this.#writes++;
    }
  }

  /** Re-reads the table; reads asked for while one is under way make one more after it. */
  #read(): Promise<void> {
    if (this.#reading) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = (async () => {
      do {
        this.#again = false;
        await this.#readOnce();
      } while (this.#again && !this.#closed);
    })().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  async #readOnce(): Promise<void> {
    const writes = this.#writes;
    const rows = await this.#opts.db.query<{ file_name: string }>(SELECT);
    // a write of this instance overlapped the read: the next notification or tick reads again
    if (this.#writing > 0 || this.#writes !== writes) return;
    this.#names = new Set(rows.rows.map((r) => r.file_name));
  }

  /** Opens the LISTEN connection; a lost one is dropped and opened again by the next tick. */
  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#opts.url, keepAlive: true });
    client.on('error', (e) => {
      this.#warnOnce(`the suspend flags' LISTEN connection was lost: ${e.message}`);
      if (this.#listener === client) this.#listener = undefined;
      void client.end().catch(() => undefined);
    });
    client.on('notification', () => void this.#read().catch(() => undefined));
    this.#listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${SUSPEND_FLAGS_CHANNEL}`);
    } catch (e) {
      if (this.#listener === client) this.#listener = undefined;
      await client.end().catch(() => undefined);
      throw e;
    }
  }

  /** The safety net: the LISTEN connection reopened if lost, the table re-read. */
  #tick(): void {
    if (this.#closed) return;
    const listening = this.#listener ? Promise.resolve() : this.#listen();
    void listening
      .then(() => this.#read())
      .then(() => (this.#failing = false))
      .catch((e: unknown) =>
        this.#warnOnce(`the suspend flags could not be re-read: ${(e as Error).message}`),
      );
  }

  /** One warning per outage, not one per tick. */
  #warnOnce(message: string): void {
    if (this.#failing || this.#closed) return;
    this.#failing = true;
    this.#opts.warn?.(message);
  }
}
