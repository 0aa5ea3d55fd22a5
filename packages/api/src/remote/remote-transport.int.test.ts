import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RemoteNodeConfig } from '@trellis/core';
import { sendToRemoteNode } from './remote-transport.js';

/*
 * A self-signed certificate for 127.0.0.1 (EC P-256, valid until 2126), made for this test only
 * with: openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 *   -subj /CN=trellis-test -addext subjectAltName=IP:127.0.0.1,DNS:localhost
 */
const TEST_KEY = [
  '-----BEGIN PRIVATE KEY-----',
  'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7PK//giCuMXKVH2T',
  'zZNUmpkIOzlQ32NP+mP0iQZE/qChRANCAAQUBaKRLYFppEJDF8uei8yOAuKeEWdU',
  '58X7LYj2KHXYd4k30ZiFApP5tp/9yLyzWejLpMRvH2o9evRS4zTNPtuV',
  '-----END PRIVATE KEY-----',
].join('\n');
const TEST_CERT = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBoDCCAUegAwIBAgIUES2NEDa2DWhnhHTv3/SdTt/nKQEwCgYIKoZIzj0EAwIw',
  'FzEVMBMGA1UEAwwMdHJlbGxpcy10ZXN0MCAXDTI2MTEyMjA4MzkyN1oYDzIxMjYx',
  'MDI5MDgzOTI3WjAXMRUwEwYDVQQDDAx0cmVsbGlzLXRlc3QwWTATBgcqhkjOPQIB',
  'BggqhkjOPQMBBwNCAAQUBaKRLYFppEJDF8uei8yOAuKeEWdU58X7LYj2KHXYd4k3',
  '0ZiFApP5tp/9yLyzWejLpMRvH2o9evRS4zTNPtuVo28wbTAdBgNVHQ4EFgQUGveO',
  'AvKn6GwSZ3ZEuWdF80E2WvAwHwYDVR0jBBgwFoAUGveOAvKn6GwSZ3ZEuWdF80E2',
  'WvAwDwYDVR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3Qw',
  'CgYIKoZIzj0EAwIDRwAwRAIgHUwDQWjS6be5ido9yyg933AHSWyIXJYmliBxqUN5',
  'gIMCIC98v//F/FiDHJXRKgsO0OGNhGl8HeXOyX7Gg0KlqzA9',
  '-----END CERTIFICATE-----',
].join('\n');

let server: https.Server;
let apiBaseURL: string;

beforeAll(async () => {
  server = https.createServer({ key: TEST_KEY, cert: TEST_CERT }, (req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ tls: true, url: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiBaseURL = `https://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

const node = (skipTLSVerify: boolean): RemoteNodeConfig => ({
  name: 'tls',
  apiBaseURL,
  skipTLSVerify,
  timeoutSec: 5,
});

describe('remote nodes over https', () => {
  it('accepts a self-signed certificate with skipTLSVerify', async () => {
    const res = await sendToRemoteNode(node(true), {
      method: 'GET',
      path: '/health',
      query: 'a=1',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({ tls: true, url: '/api/v2/health?a=1' });
  });

  it('refuses it otherwise with remote_node_error, pointing to skipTLSVerify', async () => {
    const error: unknown = await sendToRemoteNode(node(false), {
      method: 'GET',
      path: '/health',
      query: '',
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'remote_node_error' });
    expect((error as Error).message).toMatch(
      /^remote node "tls" \(https:\/\/127\.0\.0\.1:\d+\/api\/v2\) could not be reached: .*set skipTLSVerify: true/,
    );
  });
});
