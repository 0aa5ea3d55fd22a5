import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { ConfigSchema, type ConfigInput } from '@trellis/core';
import type { Permission } from '../http/auth.js';
import { createAuthenticator } from './create-authenticator.js';

const authenticator = (auth: ConfigInput['auth']) =>
  createAuthenticator(ConfigSchema.parse({ home: '/h', auth }).auth);

/** Only the header matters to the authenticator. */
const request = (authorization?: string): Request =>
  ({ headers: authorization === undefined ? {} : { authorization } }) as Request;

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('createAuthenticator', () => {
  it('lets everyone do everything in mode none, whatever they send', () => {
    const auth = authenticator({ mode: 'none', token: 'x' });
    const who = auth.authenticate(request('Bearer wrong'));
    expect(who).toEqual({ ok: true, principal: { name: 'anonymous', role: 'admin' } });
    if (who.ok) expect(auth.can(who.principal, 'dags:write')).toBe(true);
  });

  it('accepts a user by password and by passwordHash', () => {
    const auth = authenticator({
      users: [
        { name: 'alice', password: 'wonderland', role: 'viewer' },
        {
          name: 'bob',
          // sha256("test")
          passwordHash: 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
          role: 'operator',
        },
      ],
    });
    expect(auth.authenticate(request(basic('alice', 'wonderland')))).toEqual({
      ok: true,
      principal: { name: 'alice', role: 'viewer' },
    });
    expect(auth.authenticate(request(basic('bob', 'test')))).toMatchObject({
      ok: true,
      principal: { name: 'bob' },
    });
  });

  it("refuses another user's password, a prefix of the password and a longer one", () => {
    const auth = authenticator({
      users: [
        { name: 'alice', password: 'wonderland', role: 'viewer' },
        { name: 'bob', password: 'builder', role: 'viewer' },
      ],
    });
    for (const [user, pw] of [
      ['alice', 'builder'],
      ['alice', 'wonder'],
      ['alice', 'wonderland!'],
      ['carol', 'wonderland'],
    ] as const) {
      expect(auth.authenticate(request(basic(user, pw))), `${user}:${pw}`).toEqual({
        ok: false,
        challenge: 'Basic realm="trellis"',
        message: 'invalid user name or password',
      });
    }
  });

  it('accepts tokens in basic mode and users in bearer mode: mode only picks the challenge', () => {
    const config = {
      users: [{ name: 'alice', password: 'pw', role: 'viewer' as const }],
      tokens: [{ name: 'ci', token: 'ci-token', role: 'operator' as const }],
    };
    for (const mode of ['basic', 'bearer'] as const) {
      const auth = authenticator({ ...config, mode });
      expect(auth.authenticate(request('Bearer ci-token'))).toMatchObject({
        ok: true,
        principal: { name: 'ci' },
      });
      expect(auth.authenticate(request(basic('alice', 'pw')))).toMatchObject({ ok: true });
      expect(auth.authenticate(request())).toMatchObject({
        ok: false,
        challenge: mode === 'basic' ? 'Basic realm="trellis"' : 'Bearer realm="trellis"',
      });
    }
  });

  it('says how to authenticate, naming the configured kinds, and never echoes a secret', () => {
    const auth = authenticator({
      mode: 'bearer',
      tokens: [{ name: 'ci', token: 'right', role: 'viewer' }],
    });
    expect(auth.authenticate(request())).toMatchObject({
      message: 'authentication required: send Authorization: Bearer <token>',
    });
    const wrong = auth.authenticate(request('Bearer my-wrong-secret'));
    expect(wrong).toMatchObject({ ok: false, message: 'invalid token' });
    expect(JSON.stringify(wrong)).not.toContain('my-wrong-secret');
    expect(auth.authenticate(request('Token abc'))).toMatchObject({
      message:
        'invalid Authorization header: the Authorization scheme is neither Basic nor Bearer; ' +
        'send Authorization: Bearer <token>',
    });
  });

  it.each([
    ['admin', ['read', 'dags:write', 'runs:write']],
    ['manager', ['read', 'dags:write', 'runs:write']],
    ['operator', ['read', 'runs:write']],
    ['viewer', ['read']],
  ] as const)('grants %s exactly %j', (role, granted) => {
    const auth = authenticator({ users: [{ name: 'u', password: 'p', role }] });
    const all: Permission[] = ['read', 'dags:write', 'runs:write'];
    expect(all.filter((p) => auth.can({ name: 'u', role }, p))).toEqual(granted);
  });

  it('grants nothing to an unknown role', () => {
    const auth = authenticator({ users: [{ name: 'u', password: 'p', role: 'admin' }] });
    expect(auth.can({ name: 'x', role: 'root' }, 'read')).toBe(false);
    expect(auth.can({ name: 'x', role: 'constructor' }, 'read')).toBe(false);
  });
});
