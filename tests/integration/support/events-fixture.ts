import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { eventRoutes, queueRoutes, runRoutes, type HttpDeps } from '@trellis/api';
import type { RunEvent } from '@trellis/services';
import { apiHarness, type ApiHarness } from './api-harness.js';

/** A real API server (listening on a free port) with the event routes, per test. */
export interface EventsFixture {
  readonly h: ApiHarness;
  /** `http://127.0.0.1:<port>/api/v2`. */
  readonly base: string;
  /**
   * A named gate: a FIFO under the temp home. `gate.wait` is a shell command that blocks until
   * `gate.open()` writes a line into it (never a sleep).
   */
  gate(name: string): { readonly wait: string; open(): Promise<void> };
  /** Resolves with the first event published from now on that matches. */
  published(match: (e: RunEvent) => boolean): Promise<RunEvent>;
}

/** Registers the hooks in the calling file: each test gets a fresh harness and server. */
export const useEventsServer = (sse: HttpDeps['sse'] = {}): EventsFixture => {
  let h: ApiHarness | undefined;
  let server: Server | undefined;
  beforeEach(async () => {
    h = apiHarness([runRoutes, queueRoutes, eventRoutes], {
      queueConfig: [{ name: 'batch', maxConcurrency: 4 }],
      sse,
    });
    const s = h.app.listen(0, '127.0.0.1');
    server = s;
    await new Promise<void>((resolve) => s.once('listening', () => resolve()));
  });
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    h?.cleanup();
  });
  const harness = (): ApiHarness => {
    if (!h) throw new Error('useEventsServer: inside tests only');
    return h;
  };
  return {
    get h() {
      return harness();
    },
    get base() {
      return `http://127.0.0.1:${(server?.address() as AddressInfo).port}/api/v2`;
    },
    gate: (name) => {
      const path = join(harness().home, `${name}.fifo`);
      execFileSync('mkfifo', [path]);
      return { wait: `read line < ${path}`, open: () => writeFile(path, 'go\n') };
    },
    published: (match) =>
      new Promise((resolve) => {
        const sub = harness().runEvents.subscribe({}, (e) => {
          if (!match(e)) return;
          sub.unsubscribe();
          resolve(e);
        });
      }),
  };
};
