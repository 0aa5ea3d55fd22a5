import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '@trellis/core';
import { isAllowed, roleOf, userNameOf } from './oidc-identity.js';
import { parseCookies, signValue, verifyValue } from './signed-cookie.js';

const secret = Buffer.from('0123456789abcdef0123456789abcdef');

describe('signed cookie values', () => {
  it('round-trips until the expiry and rejects tampering', () => {
    const v = signValue(secret, { name: 'alice', role: 'operator', exp: 2000 });
    expect(verifyValue(secret, v, 1999)).toEqual({ name: 'alice', role: 'operator', exp: 2000 });
    expect(verifyValue(secret, v, 2000)).toBeUndefined();
    const [body, sig] = v.split('.');
    const forged = Buffer.from(
      JSON.stringify({ name: 'alice', role: 'admin', exp: 2000 }),
    ).toString('base64url');
    expect(verifyValue(secret, `${forged}.${sig}`, 1)).toBeUndefined();
    expect(verifyValue(Buffer.from('another-key-another-key-another-k'), v, 1)).toBeUndefined();
    expect(verifyValue(secret, body, 1)).toBeUndefined();
    expect(verifyValue(secret, undefined, 1)).toBeUndefined();
  });

  it('parses a Cookie header', () => {
    const c = parseCookies('a=1; trellis_session=x.y%3D; a=2');
    expect(c.get('a')).toBe('1');
    expect(c.get('trellis_session')).toBe('x.y=');
  });
});

const oidc = (extra: Record<string, unknown> = {}) => {
  const auth = ConfigSchema.parse({
    home: '/h',
    auth: {
      oidc: {
        issuer: 'https://id.example.com',
        clientId: 'trellis',
        clientSecret: 's',
        ...extra,
      },
    },
  }).auth;
  if (!auth.oidc) throw new Error('no oidc');
  return { auth, cfg: auth.oidc };
};

describe('auth.oidc config', () => {
  it('has defaults and turns authentication on', () => {
    const { auth, cfg } = oidc();
    expect(auth.mode).toBe('bearer');
    expect(cfg).toMatchObject({
      scopes: ['openid', 'profile', 'email'],
      clientUrl: '',
      allowedUsers: [],
      roleClaim: 'roles',
      roleMap: {},
      defaultRole: 'viewer',
      sessionTtlSec: 86_400,
    });
    expect(oidc({ scopes: ['email'] }).cfg.scopes).toEqual(['openid', 'email']);
    expect(oidc({ clientUrl: 'https://t.example.com/trellis/' }).cfg.clientUrl).toBe(
      'https://t.example.com/trellis',
    );
  });

  it('names a bad value and the fix', () => {
    const r = ConfigSchema.safeParse({
      home: '/h',
      auth: {
        oidc: { issuer: 'id.example.com', clientId: 'c', clientSecret: 's', defaultRole: 'boss' },
      },
    });
    expect(r.success).toBe(false);
    const text = JSON.stringify(r.error?.issues);
    expect(text).toContain('use the issuer URL with http:// or https://');
    expect(text).toContain('use one of admin, manager, operator, viewer');
  });
});

describe('OIDC identity', () => {
  const { cfg } = oidc({
    allowedUsers: ['Alice@Example.com', 'svc-bot'],
    roleMap: { 'trellis-ops': 'operator', 'trellis-admins': 'admin' },
  });

  it('names the user by e-mail, then user name, then subject', () => {
    expect(userNameOf({ sub: 's', email: 'a@x', preferred_username: 'u' })).toBe('a@x');
    expect(userNameOf({ sub: 's', preferred_username: 'u' })).toBe('u');
    expect(userNameOf({ sub: 's' })).toBe('s');
  });

  it('applies allowedUsers case-insensitively to e-mail, user name or subject', () => {
    expect(isAllowed(cfg, { sub: '1', email: 'alice@example.com' })).toBe(true);
    expect(isAllowed(cfg, { sub: 'svc-bot' })).toBe(true);
    expect(isAllowed(cfg, { sub: '2', email: 'eve@example.com' })).toBe(false);
    expect(isAllowed(oidc().cfg, { sub: 'anyone' })).toBe(true);
  });

  it('maps the role claim to the most powerful role it gives', () => {
    expect(roleOf(cfg, { roles: ['trellis-ops', 'trellis-admins'] })).toBe('admin');
    expect(roleOf(cfg, { roles: 'trellis-ops' })).toBe('operator');
    expect(roleOf(cfg, { roles: ['manager'] })).toBe('manager');
    expect(roleOf(cfg, { roles: ['unknown-group'] })).toBe('viewer');
    expect(roleOf(cfg, {})).toBe('viewer');
    expect(roleOf({ ...cfg, roleClaim: 'groups' }, { groups: ['trellis-ops'] })).toBe('operator');
  });
});
