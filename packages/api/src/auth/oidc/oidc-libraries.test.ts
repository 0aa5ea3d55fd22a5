import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OidcConfig } from '@trellis/core';

const CFG = {
  issuer: 'https://issuer.invalid',
  clientId: 'trellis',
  clientSecret: 'secret',
} as unknown as OidcConfig;

afterEach(() => {
  vi.doUnmock('jose');
  vi.resetModules();
});

describe('OidcClient loading its libraries with the first sign-in', () => {
  it('tries again after a failed load, and names no path on the server', async () => {
    vi.resetModules();
    vi.doMock('jose', () => {
      throw new Error('Cannot find package jose imported from /srv/secret/path/oidc-client.js');
    });
    const { OidcClient } = await import('./oidc-client.js');
    const client = new OidcClient(CFG);
    const failed = await client.flowSecrets().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(failed?.message).toMatch(/the OIDC libraries \(openid-client, jose\) cannot be loaded/);
    expect(failed?.message).not.toContain('/srv/secret');
    vi.doUnmock('jose');
    const secrets = await client.flowSecrets();
    expect(secrets.state).toMatch(/^[\w-]{43}$/);
    expect(secrets.verifier).not.toBe(secrets.state);
  });
});
