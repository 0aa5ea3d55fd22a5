import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509Module from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type X509 = typeof X509Module;

let loaded: Promise<X509> | undefined;

/**
 * @peculiar/x509, loaded on the first certificate made: about 10 MB of memory that every process
 * importing this package (a worker, for its gRPC client) would otherwise hold for nothing.
 */
const x509Lib = (): Promise<X509> =>
  (loaded ??= (async () => {
    // it resolves its parts with tsyringe, which needs the Reflect metadata polyfill first
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    return x509;
  })());

/** ECDSA P-256 with SHA-256: small keys, and what gRPC's TLS (OpenSSL) accepts everywhere. */
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate and its private key, PEM. */
export interface CertPair {
  readonly cert: string;
  readonly key: string;
}

const DAY_MS = 86_400_000;

const serial = (): string => {
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f; // a positive serial number
  return b.toString('hex');
};

const keyPem = async (x509: X509, key: CryptoKey): Promise<string> =>
  x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

const newKeys = (): Promise<CryptoKeyPair> =>
  webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);

/** A CA certificate (`CN=<name>`) valid for `days`, which signs only certificates. */
export const makeCa = async (name: string, days: number, now: Date): Promise<CertPair> => {
  const x509 = await x509Lib();
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    notBefore: now,
    notAfter: new Date(now.getTime() + days * DAY_MS),
    keys: keys as never,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await keyPem(x509, keys.privateKey) };
};

/** What a certificate signed by the CA is for. */
export interface LeafRequest {
  /** `CN=` of the subject: the coordinator's first host, or the worker's id. */
  readonly commonName: string;
  /** `server` (the coordinator) or `client` (a worker, for mutual TLS). */
  readonly use: 'server' | 'client';
  /** DNS names and IP addresses the certificate is valid for (subjectAltName). */
  readonly hosts: readonly string[];
  readonly days: number;
}

/** A certificate signed by `ca`, with its own new key. */
export const makeLeaf = async (ca: CertPair, req: LeafRequest, now: Date): Promise<CertPair> => {
  const x509 = await x509Lib();
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(ca.key),
    ALG,
    false,
    ['sign'],
  );
  const keys = await newKeys();
  const names = req.hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h }) as const);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${req.commonName}`,
    issuer: caCert.subject,
    notBefore: now,
    notAfter: new Date(now.getTime() + req.days * DAY_MS),
    signingKey: caKey as never,
    publicKey: keys.publicKey as never,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(
        [
          req.use === 'server'
            ? x509.ExtendedKeyUsage.serverAuth
            : x509.ExtendedKeyUsage.clientAuth,
        ],
        false,
      ),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem'), key: await keyPem(x509, keys.privateKey) };
};
