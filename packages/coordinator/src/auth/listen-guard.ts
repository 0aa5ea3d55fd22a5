/** True for an address only this host can reach. */
const isLoopback = (host: string): boolean =>
  host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '[::1]';

/** How the coordinator is exposed. */
export interface Exposure {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly tokens: number;
  readonly insecure: boolean;
}

/**
 * Why the coordinator must not listen as configured (a non-loopback address with neither TLS nor
 * worker tokens, and no explicit `insecure`), or undefined. Anyone who reaches the port could
 * join as a worker, take runs and read their records, environment and logs.
 */
export const exposureProblem = (e: Exposure): string | undefined => {
  if (isLoopback(e.host) || e.tls || e.tokens > 0 || e.insecure) return undefined;
  return (
    `refusing to listen on ${e.host}:${e.port} without TLS or worker tokens: anyone who reaches it could join as a worker and read runs, their parameters and logs. ` +
    'Set coordinator.tlsCertFile and tlsKeyFile (make them with `trellis certs`), or worker tokens in coordinator.tokens (SVC_COORDINATOR_TOKENS), ' +
    'or listen on 127.0.0.1; on a private network you trust, pass --insecure (coordinator.insecure: true, SVC_COORDINATOR_INSECURE=true)'
  );
};
