import { once } from 'node:events';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerClientErrors, createHealthProbe, healthAnswer } from '@trellis/api/probes';
import { systemClock, type Config, type ConfigFlags } from '@trellis/core';
import { dataDirProblem } from '@trellis/store/writable-probe';
import { ExitCode, type CliIo } from '../io.js';
import { VERSION } from '../version.js';
import { createApiServer, type ApiServer } from './api-server.js';
import { ensureFolders } from './folders.js';
import type { ServingApp } from './serve-app.js';
import { serveGate, type ServeGateOptions } from './serve-gate.js';
import { SHUTDOWN_GRACE_MS, shutdownSignal } from './shutdown.js';
import { SHUTDOWN_SLACK_MS } from './shutdown-phases.js';
import { importInStages } from './staged-import.js';

export interface ServeOptions {
  /** `start-all`: also the scheduler role (cron, queue processor, zombie detector). */
  readonly withScheduler: boolean;
  /** Resolves when the server should shut down (SIGTERM/SIGINT by default). */
  readonly until?: Promise<unknown>;
  /**
   * Called with the server's address once `/health` answers: as it listens with the early probe
   * (requests for the app wait for it), else once the app is ready.
   */
  readonly onListening?: (url: string) => void;
}

/**
 * `GET /health` while the app loads (serve-gate.ts): with the file store and no fleet, the same
 * probe as the app's then (the data folder writable; no write has failed yet, and the scheduler
 * is starting). With PostgreSQL (the lease's role and age) or a fleet (Redis may refuse and end
 * the start-up), health waits for the app. docs/decisions.md: "Start-up: /health before the app".
 */
const earlyHealthOf = (
  config: Readonly<Config>,
  withScheduler: boolean,
  startedAt: Date,
): Pick<ServeGateOptions, 'earlyHealth'> => {
  if (config.database !== undefined || (withScheduler && config.redis?.url !== undefined))
    return {};
  const probe = createHealthProbe({ storeProblem: () => dataDirProblem(config.paths.dataDir) });
  return {
    earlyHealth: async () => healthAnswer(await probe(), VERSION, startedAt, systemClock.now()),
  };
};

/**
 * `trellis server` / `trellis start-all`: the REST API over the local store, runs executing in
 * this process. It listens first and loads the runtime and the Express app after (serve-app.ts):
 * requests wait for the app meanwhile, but `GET /health` (serve-gate.ts); the "serving" line says
 * when /health answers. Graceful shutdown: stop accepting, let runs finish for a grace period,
 * then stop them, exit 0; a signal during the start-up shuts down as soon as the app is ready.
 */
export const serve = async (
  io: CliIo,
  flags: ConfigFlags,
  opts: ServeOptions,
): Promise<ExitCode> => {
  const { loadConfig } = await import('./config-loader.js');
  const { config } = loadConfig({ env: io.env, argv: flags, cwd: io.cwd });
  ensureFolders(config);
  const startedAt = systemClock.now();
  const early = earlyHealthOf(config, opts.withScheduler, startedAt);
  const gate = serveGate({ healthPath: `${config.server.basePath}/api/v2/health`, ...early });
  const api = await listen(gate.listener, config, io);
  if (api === undefined) return ExitCode.Failure;
  const { server } = api;
  const until = opts.until ?? shutdownSignal(io);
  const stopReloads = reloadOnHangup(api, io);
  // "serving" once /health answers: at once with the early probe, else when the app is ready
  const announce = (): void => {
    const addr = server.address() as AddressInfo;
    const url = `${api.scheme}://${config.server.host}:${addr.port}${config.server.basePath}`;
    io.out(
      `Trellis ${VERSION} serving ${url}/api/v2 (DAGs in ${config.paths.dagsDir}, data in ${config.home})`,
    );
    opts.onListening?.(url);
  };
  if (early.earlyHealth) announce();
  let ready: ServingApp | undefined;
  try {
    // the API, runtime and scheduler
    const wiring = loadApp().then(({ wireApp }) =>
      wireApp(io, flags, config, { withScheduler: opts.withScheduler, startedAt }),
    );
    ready = await readyUnlessStopped(wiring, until, io);
  } finally {
    if (ready === undefined) {
      stopReloads();
      gate.fail();
      server.close();
      server.closeAllConnections();
    }
  }
  if (ready === undefined) return ExitCode.Failure;
  gate.open(ready.app);
  ready.serving();
  if (!early.earlyHealth) announce();

  const signal = await until;
  stopReloads();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await ready.stop((part) => {
    // a part that never stops must not keep the process (and its port) forever
    const s = (SHUTDOWN_GRACE_MS + SHUTDOWN_SLACK_MS) / 1000;
    io.err(
      `trellis: the shutdown${typeof signal === 'string' ? ` on ${signal}` : ''} did not finish within ${s}s: ${part} did not stop; exiting with status 1`,
    );
    process.exit(ExitCode.Failure);
  });
  server.closeAllConnections();
  await closed;
  io.out('Trellis stopped');
  return ExitCode.Ok;
};

/**
 * The packages `serve-app.js` imports, dependencies first, each evaluated in its own turn of the
 * event loop before the app: Node evaluates a module graph in one synchronous run (the app's took
 * about 100 ms on the 2-core machine), and a `GET /health` that came meanwhile waited for all of
 * it; now for one stage at most (docs/decisions.md, "A lean idle fleet"). The module cache makes
 * the app's own import of each one free.
 */
const APP_STAGES: readonly (() => Promise<unknown>)[] = [
  () => import('@trellis/spec'),
  () => import('@trellis/store'),
  () => import('@trellis/contract'),
  () => import('@trellis/engine'),
  () => import('@trellis/telemetry'),
  () => import('@trellis/api'),
  () => import('@trellis/services'),
  () => import('@trellis/dispatch'),
  () => import('@trellis/scheduler'),
];

const loadApp = () => importInStages(APP_STAGES, () => import('./serve-app.js'));

/** HTTPS: SIGHUP rereads the certificate and key (api-server.ts). Returns the unsubscribe. */
const reloadOnHangup = (api: ApiServer, io: CliIo): (() => void) => {
  if (api.scheme !== 'https') return () => undefined;
  const onHup = (): void => {
    try {
      io.err(`received SIGHUP: ${api.reload()}`);
    } catch (e) {
      io.err(`warning: received SIGHUP, kept the current TLS certificate: ${(e as Error).message}`);
    }
  };
  process.on('SIGHUP', onHup);
  return () => process.off('SIGHUP', onHup);
};

/** Listens on the configured address; undefined (the reason said) when it cannot. */
const listen = async (
  app: RequestListener,
  config: Readonly<Config>,
  io: CliIo,
): Promise<ApiServer | undefined> => {
  let api: ApiServer;
  try {
    api = createApiServer(app, config);
  } catch (e) {
    io.err(`trellis: ${(e as Error).message}`);
    return undefined;
  }
  const { server } = api;
  server.listen(config.server.port, config.server.host);
  answerClientErrors(server);
  try {
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([e]) => {
        throw e as Error;
      }),
    ]);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    io.err(
      err.code === 'EADDRINUSE'
        ? `trellis: port ${config.server.port} on ${config.server.host} is in use: choose another with --port or SVC_PORT`
        : `trellis: cannot listen on ${config.server.host}:${config.server.port}: ${err.message}`,
    );
    return undefined;
  }
  return api;
};

/** How long a start-up may still take once a SIGTERM or SIGINT came during it. */
export const STARTUP_STOP_MS = 10_000;

/**
 * The app once wired; but when a stop signal comes during start-up and the start-up then takes
 * more than {@link STARTUP_STOP_MS} (a database or Redis that does not answer, a migration
 * lock another instance holds), undefined, so the process exits instead of waiting for ever.
 * A start-up that ends within the bound is stopped cleanly as usual.
 */
export const readyUnlessStopped = async (
  wiring: Promise<ServingApp | undefined>,
  until: Promise<unknown>,
  io: CliIo,
): Promise<ServingApp | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const GAVE_UP = Symbol('gave up');
  // a stop signal after start-up (the usual stop) arms no timer: one would hold the exit 10 s
  const givenUp = until.then(
    () =>
      new Promise<typeof GAVE_UP>((resolve) => {
        if (!settled) timer = setTimeout(() => resolve(GAVE_UP), STARTUP_STOP_MS);
      }),
  );
  try {
    const ready = await Promise.race([wiring, givenUp]);
    if (ready === GAVE_UP) {
      wiring.catch(() => undefined); // its end no longer matters: the process exits
      io.err(
        `start-up did not finish within ${STARTUP_STOP_MS / 1000}s of the stop signal (check that the database and Redis answer); exiting without serving`,
      );
      return undefined;
    }
    return ready;
  } finally {
    settled = true;
    clearTimeout(timer);
  }
};
