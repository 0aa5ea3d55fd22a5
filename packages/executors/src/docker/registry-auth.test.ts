import { describe, expect, it } from 'vitest';
import { authFor, parseAuthConfig, registryOf } from './registry-auth.js';

describe('registry auth', () => {
  it('finds the registry host of an image', () => {
    expect(registryOf('alpine')).toBe('docker.io');
    expect(registryOf('library/alpine:3')).toBe('docker.io');
    expect(registryOf('ghcr.io/org/app:1')).toBe('ghcr.io');
    expect(registryOf('127.0.0.1:5000/x/busybox')).toBe('127.0.0.1:5000');
    expect(registryOf('localhost/app')).toBe('localhost');
  });

  it('prefers registryAuths, then CONTAINER_AUTH_CONFIG, decoding auth', () => {
    const env = parseAuthConfig(
      JSON.stringify({
        auths: { 'ghcr.io': { auth: Buffer.from('envuser:envpw').toString('base64') } },
      }),
    );
    if ('problem' in env) throw new Error(env.problem);
    const dag = { 'ghcr.io': { username: 'dag', password: 'dagpw' } };
    expect(authFor('ghcr.io/org/app', [dag, env.auths])).toEqual({
      username: 'dag',
      password: 'dagpw',
      serveraddress: 'ghcr.io',
    });
    expect(authFor('ghcr.io/org/app', [{}, env.auths])).toMatchObject({
      username: 'envuser',
      password: 'envpw',
    });
    expect(authFor('quay.io/x', [dag, env.auths])).toBeUndefined();
  });

  it('matches Docker Hub under its other names', () => {
    const auths = { 'https://index.docker.io/v1/': { username: 'hub', password: 'p' } };
    expect(authFor('alpine:3', [auths])).toMatchObject({
      username: 'hub',
      serveraddress: 'docker.io',
    });
  });

  it('explains auth config text that is not JSON', () => {
    expect(parseAuthConfig('{nope')).toMatchObject({
      problem: expect.stringContaining('CONTAINER_AUTH_CONFIG is not JSON') as string,
    });
    expect(parseAuthConfig(undefined)).toEqual({ auths: {} });
  });
});
