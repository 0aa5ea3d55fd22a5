import { SERVICE_COMMANDS } from '../service-log.js';

/** How long a service that stopped may still hold its process before it is ended. */
export const LINGER_MS = 5000;

export interface LingerGuardPorts {
  readonly err: (line: string) => void;
  readonly exit: (code: number) => void;
  /** What keeps the event loop alive (`process.getActiveResourcesInfo`). */
  readonly resources: () => readonly string[];
}

/**
 * After a service command (`server`, `start-all`, `worker`, ...) stopped cleanly its process
 * ends when nothing is left to do. A handle it forgot to close (a timer, a socket) would keep it
 * running after "stopped" for good, and a supervisor waiting for the exit would wait with it: so
 * when the process is still alive `afterMs` later it says what held it and exits with `code`.
 * The timer is unref'd: a process that ends by itself never sees it.
 */
export const guardLinger = (
  argv: readonly string[],
  code: number,
  ports: LingerGuardPorts,
  afterMs = LINGER_MS,
): void => {
  if (!SERVICE_COMMANDS.has(argv[0] ?? '')) return;
  const timer = setTimeout(() => {
    const held = ports.resources().filter((r) => r !== 'TTYWrap');
    ports.err(
      `trellis: still running ${afterMs / 1000}s after it stopped, held by: ${held.join(', ') || 'nothing named'}; exiting`,
    );
    ports.exit(code);
  }, afterMs);
  timer.unref();
};
