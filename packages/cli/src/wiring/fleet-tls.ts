import type { Config } from '@trellis/core';
import type { TlsFiles } from '@trellis/coordinator/client';

// The TLS files of the fleet's gRPC, apart from fleet.ts: a worker reads its own without loading
// the coordinator side (docs/decisions.md, "A lean idle fleet").

type TlsSection = Readonly<Pick<Config['worker'], 'tlsCertFile' | 'tlsKeyFile' | 'tlsCaFile'>>;

const tlsFiles = (t: TlsSection): TlsFiles | undefined =>
  t.tlsCertFile === '' && t.tlsCaFile === ''
    ? undefined
    : { certFile: t.tlsCertFile, keyFile: t.tlsKeyFile, caFile: t.tlsCaFile };

/** The coordinator's TLS files (`coordinator.tls*`), or undefined for plain gRPC. */
export const tlsOf = (config: Readonly<Config>): TlsFiles | undefined =>
  tlsFiles(config.coordinator);

/**
 * A worker's TLS files (`worker.tls*`: its own client certificate and the CA it checks the
 * coordinator with), or undefined for plain gRPC. Never the coordinator's key.
 */
export const workerTlsOf = (config: Readonly<Config>): TlsFiles | undefined =>
  tlsFiles(config.worker);
