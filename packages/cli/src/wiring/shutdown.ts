import type { CliIo } from '../io.js';

/** How long runs may go on after SIGTERM before they are stopped. */
export const SHUTDOWN_GRACE_MS = 30_000;

/** Resolves on the first SIGTERM or SIGINT. */
export const shutdownSignal = (io: CliIo): Promise<NodeJS.Signals> =>
  new Promise((resolve) => {
    const on = (sig: NodeJS.Signals): void => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      io.err(
        `received ${sig}: no new requests; letting runs finish (at most ${SHUTDOWN_GRACE_MS / 1000}s, then they are stopped)`,
      );
      resolve(sig);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
