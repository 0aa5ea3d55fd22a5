import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

/**
 * TLS for the coordinator: certificate files in config (`coordinator.tls`). All empty means
 * plain h2c, which is meant for loopback or a private network only.
 */
export interface TlsFiles {
  /** PEM certificate of this side (server: required for TLS; worker: for client auth). */
  readonly certFile: string;
  /** PEM private key of `certFile`. */
  readonly keyFile: string;
  /** PEM CA bundle: the server checks worker certificates with it; workers check the server's. */
  readonly caFile: string;
}

const read = (path: string, what: string): Buffer => {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(
      `cannot read the coordinator TLS ${what} ${JSON.stringify(path)}: ${(e as Error).message}; fix the path in coordinator.tls or unset it for plain gRPC`,
    );
  }
};

export const isTlsEnabled = (tls: TlsFiles | undefined): tls is TlsFiles =>
  tls !== undefined && (tls.certFile !== '' || tls.caFile !== '');

/** Server credentials: TLS when a certificate is configured; client certificates when a CA is. */
export const serverCredentials = (tls: TlsFiles | undefined): grpc.ServerCredentials => {
  if (!isTlsEnabled(tls) || tls.certFile === '') return grpc.ServerCredentials.createInsecure();
  if (tls.keyFile === '')
    throw new Error('coordinator.tls.certFile is set without keyFile: set both, or neither');
  const ca = tls.caFile === '' ? null : read(tls.caFile, 'CA file');
  return grpc.ServerCredentials.createSsl(
    ca,
    [{ cert_chain: read(tls.certFile, 'certificate'), private_key: read(tls.keyFile, 'key') }],
    ca !== null,
  );
};

/** Channel credentials of a worker: TLS when a CA (or a client certificate) is configured. */
export const channelCredentials = (tls: TlsFiles | undefined): grpc.ChannelCredentials => {
  if (!isTlsEnabled(tls)) return grpc.credentials.createInsecure();
  const ca = tls.caFile === '' ? null : read(tls.caFile, 'CA file');
  const withCert = tls.certFile !== '' && tls.keyFile !== '';
  return grpc.credentials.createSsl(
    ca,
    withCert ? read(tls.keyFile, 'key') : null,
    withCert ? read(tls.certFile, 'certificate') : null,
  );
};
