import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, redisReady } from '@trellis/testkit';

/** A private redis-server serving only TLS, with a password, and the CA that signed its cert. */
export interface TlsRedis {
  /** `rediss://:password@127.0.0.1:port` */
  readonly url: string;
  readonly port: number;
  /** The CA certificate file a client must trust (NODE_EXTRA_CA_CERTS). */
  readonly caFile: string;
  stop(): Promise<void>;
}

const openssl = (dir: string, args: string[]): void => {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
};

/** A throw-away CA and a server certificate for 127.0.0.1 signed by it, made by real openssl. */
const makeCerts = (dir: string): void => {
  const days = ['-days', '2'];
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key'].concat([
      '-out',
      'ca.pem',
      '-subj',
      '/CN=trellis-test-ca',
      ...days,
    ]),
  );
  openssl(
    dir,
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'redis.key'].concat([
      '-out',
      'redis.csr',
      '-subj',
      '/CN=127.0.0.1',
    ]),
  );
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    dir,
    ['x509', '-req', '-in', 'redis.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key'].concat([
      '-CAcreateserial',
      '-out',
      'redis.pem',
      '-extfile',
      'san.ext',
      ...days,
    ]),
  );
};

/** Starts redis-server with TLS only (no plain port) on a free loopback port, password `password`. */
export const startTlsRedis = async (password: string): Promise<TlsRedis> => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-redis-tls-'));
  makeCerts(dir);
  const port = await freePort();
  const proc = spawn(
    'redis-server',
    ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--save', '']
      .concat(['--dir', dir, '--requirepass', password, '--tls-auth-clients', 'no'])
      .concat(['--tls-cert-file', join(dir, 'redis.pem'), '--tls-key-file', join(dir, 'redis.key')])
      .concat(['--tls-ca-cert-file', join(dir, 'ca.pem')]),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await redisReady(proc);
  return {
    url: `rediss://:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    port,
    caFile: join(dir, 'ca.pem'),
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGKILL');
        await once(proc, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
