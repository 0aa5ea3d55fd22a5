import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startAll, type StartAll } from './support/start-all.js';

/*
 * HTTPS on the API (issue 19 item 3): a real `trellis start-all` serving the certificate of
 * server.tlsCertFile, made here with the openssl binary; a real HTTPS client that trusts only
 * that certificate; SIGHUP swapping in a new certificate without dropping open connections;
 * cookies marked Secure.
 */

let home: string;
let server: StartAll;

/** A self-signed certificate for 127.0.0.1 with this serial (hex), and its key. */
const makeCert = (name: string, serial: string): { cert: string; key: string } => {
  const cert = join(home, `${name}.crt`);
  const key = join(home, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-keyout',
      key,
      '-out',
      cert,
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-set_serial',
      `0x${serial}`,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
};

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly serial: string;
  readonly socket: TLSSocket;
}

/** One HTTPS request trusting only `ca`; the peer certificate's serial. */
const call = (url: string, opts: { ca: string[]; method?: string; agent?: Agent | false }) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request(
      url,
      { ca: opts.ca, method: opts.method ?? 'GET', agent: opts.agent ?? false },
      (res) => {
        const socket = res.socket as TLSSocket;
        const serial = socket.getPeerCertificate().serialNumber;
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, serial, socket }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });

let first: { cert: string; key: string };
let second: { cert: string; key: string };
let cas: string[];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-https-'));
  first = makeCert('first', '1001');
  second = makeCert('second', '2002');
  cas = [readFileSync(first.cert, 'utf8'), readFileSync(second.cert, 'utf8')];
  // The served files; the test overwrites them with the second pair before SIGHUP.
  writeFileSync(join(home, 'api.crt'), readFileSync(first.cert));
  writeFileSync(join(home, 'api.key'), readFileSync(first.key));
  writeFileSync(
    join(home, 'config.yaml'),
    `server:
  tlsCertFile: api.crt
  tlsKeyFile: api.key
auth:
  oidc:
    issuer: http://127.0.0.1:9
    clientId: trellis-ui
    clientSecret: a-client-secret
`,
  );
  server = await startAll({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home });
});

afterAll(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('HTTPS on the API', () => {
  it('serves over TLS with the configured certificate', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await call(`${server.url}/api/v2/health`, { ca: cas });
    expect(r.status).toBe(200);
    expect(r.serial).toBe('1001');
    // a client that does not trust the certificate refuses the connection
    await expect(call(`${server.url}/api/v2/health`, { ca: [cas[1] ?? ''] })).rejects.toThrow(
      /self-signed|self signed/,
    );
  });

  it('marks cookies Secure when served over TLS', async () => {
    const r = await call(`${server.url}/auth/logout`, { ca: cas, method: 'POST' });
    expect(r.status).toBe(204);
    const cookie = String(r.headers['set-cookie']);
    expect(cookie).toContain('trellis_session=;');
    expect(cookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
  });

  it('swaps the certificate on SIGHUP without dropping open connections', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const before = await call(`${server.url}/api/v2/health`, { ca: cas, agent });
    expect(before.serial).toBe('1001');
    writeFileSync(join(home, 'api.crt'), readFileSync(second.cert));
    writeFileSync(join(home, 'api.key'), readFileSync(second.key));
    server.proc.kill('SIGHUP');
    await server.waitFor('received SIGHUP: serving the TLS certificate');
    expect(server.output()).toContain('(serial 2002,');
    // a new connection gets the new certificate
    const fresh = await call(`${server.url}/api/v2/health`, { ca: cas });
    expect(fresh.serial).toBe('2002');
    // the connection opened before the reload still answers, on the same socket
    const again = await call(`${server.url}/api/v2/health`, { ca: cas, agent });
    expect(again.status).toBe(200);
    expect(again.socket).toBe(before.socket);
    agent.destroy();
  });

  it('keeps the current certificate when the new files do not fit, and says why', async () => {
    writeFileSync(join(home, 'api.key'), readFileSync(first.key)); // the key of another cert
    server.proc.kill('SIGHUP');
    await server.waitFor('kept the current TLS certificate');
    expect(server.output()).toMatch(/server\.tlsKeyFile \S+api\.key is not the private key/);
    const r = await call(`${server.url}/api/v2/health`, { ca: cas });
    expect(r.status).toBe(200);
    expect(r.serial).toBe('2002');
  });

  it('refuses to serve with a key that does not fit the certificate, and says why', async () => {
    const other = mkdtempSync(join(tmpdir(), 'trellis-e2e-https-bad-'));
    writeFileSync(
      join(other, 'config.yaml'),
      `server:\n  tlsCertFile: ${first.cert}\n  tlsKeyFile: ${second.key}\n`,
    );
    const proc = spawn(process.execPath, [BIN, 'start-all', '--host', '127.0.0.1', '--port', '0'], {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: other, SVC_HOME: other },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let err = '';
      proc.stderr.setEncoding('utf8');
      await new Promise<void>((resolve) => {
        proc.stderr.on('data', (c: string) => {
          err += c;
          if (err.includes('give the key the certificate was made for')) resolve();
        });
      });
      expect(err).toContain(`server.tlsKeyFile ${second.key} is not the private key of`);
    } finally {
      proc.kill('SIGTERM');
      rmSync(other, { recursive: true, force: true });
    }
  });
});
