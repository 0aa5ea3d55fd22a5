import { createSign, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '@trellis/core';
import { verifyIdToken } from './id-token.js';
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

describe('verifyIdToken', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk: JsonWebKey = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig' };
  const sign = (claims: Record<string, unknown>, kid = 'k1'): string => {
    const h = Buffer.from(JSON.stringify({ alg: 'RS256', kid })).toString('base64url');
    const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const s = createSign('sha256').update(`${h}.${p}`).sign(privateKey).toString('base64url');
    return `${h}.${p}.${s}`;
  };
  const good = { iss: 'https://id.example.com', aud: 'trellis', exp: 2000, nonce: 'n1', sub: 'a' };
  const want = { issuer: 'https://id.example.com', clientId: 'trellis', nonce: 'n1', nowSec: 1000 };

  it('returns the claims of a valid token', () => {
    expect(verifyIdToken(sign(good), [jwk], want)).toMatchObject({ sub: 'a' });
  });

  it('says which check fails', () => {
    expect(() => verifyIdToken(sign({ ...good, iss: 'https://evil' }), [jwk], want)).toThrow(
      'the ID token is from https://evil, not https://id.example.com',
    );
    expect(() => verifyIdToken(sign({ ...good, aud: 'other' }), [jwk], want)).toThrow(
      'not for client trellis',
    );
    expect(() => verifyIdToken(sign({ ...good, exp: 100 }), [jwk], want)).toThrow('expired');
    expect(() => verifyIdToken(sign({ ...good, nonce: 'n2' }), [jwk], want)).toThrow('nonce');
    expect(() => verifyIdToken(sign(good, 'k2'), [jwk], want)).toThrow('no key of the issuer');
    const t = sign(good);
    const tampered = `${t.slice(0, t.lastIndexOf('.'))}.${Buffer.from('x').toString('base64url')}`;
    expect(() => verifyIdToken(tampered, [jwk], want)).toThrow('signature does not verify');
    expect(() => verifyIdToken('nope', [jwk], want)).toThrow();
  });
});
