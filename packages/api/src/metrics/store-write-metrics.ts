import { Counter, type Registry } from 'prom-client';

/** `svc_store_write_errors_total{kind}`: the store's failed writes, read at every scrape. */
export const registerStoreWriteErrors = (
  registry: Registry,
  counts: () => Readonly<Record<string, number>>,
): void => {
  new Counter({
    name: 'svc_store_write_errors_total',
    help: 'Writes the store could not do (a full disk) since the process started, by what: log, record.',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      // the store counts; the counter shows its totals
      this.reset();
      for (const [kind, n] of Object.entries(counts())) this.inc({ kind }, n);
    },
  });
};
