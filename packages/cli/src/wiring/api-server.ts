import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Config } from '@trellis/core';

/*
 * The REST API's listening server: plain HTTP, or HTTPS when `server.tlsCertFile` and
 * `server.tlsKeyFile` are set. `reload` rereads both files and swaps them in with
 * `setSecureContext`: new connections get the new certificate, open ones carry on.
 */

export interface ApiServer {
  readonly server: Server;
  readonly scheme: 'http' | 'https';
  /**
   * Rereads the certificate and key (HTTPS only) and says what it now serves.
   * @throws Error naming the file and the fix; the current certificate stays in use.
   */
  reload(): string;
}

interface KeyPair {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** What the server serves, for the log: file, serial and expiry. */
  readonly describe: string;
}

const readPem = (file: string, setting: string): Buffer => {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new Error(
      `cannot read server.${setting} ${file}: ${(e as Error).message} (check the path and that this user may read it)`,
    );
  }
};

/** Reads and checks the pair: a certificate, and the private key that belongs to it. */
const readPair = (config: Pick<Config, 'home' | 'server'>): KeyPair => {
  const certFile = path.resolve(config.home, config.server.tlsCertFile);
  const keyFile = path.resolve(config.home, config.server.tlsKeyFile);
  const cert = readPem(certFile, 'tlsCertFile');
  const key = readPem(keyFile, 'tlsKeyFile');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new Error(
      `server.tlsCertFile ${certFile} is not a PEM certificate (${(e as Error).message}): give a file starting with -----BEGIN CERTIFICATE-----`,
    );
  }
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    throw new Error(
      `server.tlsKeyFile ${keyFile} is not the private key of server.tlsCertFile ${certFile} (${(e as Error).message}): give the key the certificate was made for`,
    );
  }
  return {
    cert,
    key,
    describe: `${certFile} (serial ${x509.serialNumber}, valid until ${x509.validTo})`,
  };
};

/**
 * The server for `app`, HTTPS when the config names a certificate.
 * @throws Error naming the file and the fix when the certificate or key cannot be used.
 */
export const createApiServer = (
  app: RequestListener,
  config: Pick<Config, 'home' | 'server'>,
): ApiServer => {
  if (config.server.tlsCertFile === '') {
    return {
      server: createHttpServer(app),
      scheme: 'http',
      reload: () => 'plain HTTP: no certificate to reload',
    };
  }
  const first = readPair(config);
  const server = createHttpsServer({ cert: first.cert, key: first.key }, app);
  return {
    server,
    scheme: 'https',
    reload: () => {
      const next = readPair(config);
      server.setSecureContext({ cert: next.cert, key: next.key });
      return `serving the TLS certificate ${next.describe}`;
    },
  };
};
