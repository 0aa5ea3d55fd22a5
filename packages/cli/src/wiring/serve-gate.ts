import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { HealthAnswer } from '@trellis/api/probes';

/**
 * The API server's request listener from the moment it listens, before the Express app and the
 * runtime are loaded (issue 21: start-up). Until {@link ServeGate.open}, `GET
 * <basePath>/api/v2/health` is answered by `earlyHealth` when one is given, and every other
 * request (and every request when none is) waits; then all of them go to the app, in arrival
 * order. A request never gets an answer the app would not give: the DAG list, runs and metrics
 * come from the app only.
 */
export interface ServeGate {
  readonly listener: RequestListener;
  /** The app is ready: the waiting requests, then every new one, go to it. */
  open(app: RequestListener): void;
  /** Start-up failed (the process exits): the waiting requests' connections are closed. */
  fail(): void;
}

export interface ServeGateOptions {
  /** `<basePath>/api/v2/health`, as the request line has it. */
  readonly healthPath: string;
  /** `GET /health` while the app loads; absent: health requests wait for the app too. */
  readonly earlyHealth?: () => Promise<HealthAnswer>;
}

const answer = (res: ServerResponse, health: () => Promise<HealthAnswer>): void => {
  health().then(
    (a) => {
      const body = JSON.stringify(a.body);
      res.writeHead(a.status, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
    },
    () => res.destroy(), // createHealthProbe never rejects; a broken probe is no answer
  );
};

export const serveGate = (opts: ServeGateOptions): ServeGate => {
  let app: RequestListener | undefined;
  let failed = false;
  const waiting: [IncomingMessage, ServerResponse][] = [];
  return {
    listener: (req, res) => {
      if (app) {
        app(req, res);
      } else if (failed) {
        res.destroy();
      } else if (opts.earlyHealth && req.method === 'GET' && req.url === opts.healthPath) {
        answer(res, opts.earlyHealth);
      } else {
        waiting.push([req, res]);
      }
    },
    open: (ready) => {
      app = ready;
      for (const [req, res] of waiting.splice(0)) ready(req, res);
    },
    fail: () => {
      failed = true;
      for (const [, res] of waiting.splice(0)) res.destroy();
    },
  };
};
