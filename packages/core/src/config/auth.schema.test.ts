import { describe, expect, it } from 'vitest';
import { sha256Hex } from './auth.schema.js';
import { ConfigSchema, type ConfigInput } from './config.schema.js';

const parseAuth = (auth: ConfigInput['auth']) => ConfigSchema.parse({ home: '/h', auth }).auth;

/** The messages of the issues parsing `auth` produces, with their dotted paths. */
const problems = (auth: unknown): string[] => {
  const r = ConfigSchema.safeParse({ home: '/h', auth });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.slice(1).join('.')}: ${i.message}`);
};

const ALICE_SHA = sha256Hex('wonderland');

describe('auth config', () => {
  it('is off by default', () => {
    expect(parseAuth(undefined)).toEqual({ mode: 'none', users: [], tokens: [] });
  });

  it('keeps users and tokens as SHA-256 digests only, never in clear', () => {
    const auth = parseAuth({
      mode: 'basic',
      users: [{ name: 'alice', password: 'wonderland', role: 'viewer' }],
      tokens: [{ name: 'ci', token: 's3cret-token', role: 'operator' }],
    });
    expect(auth).toEqual({
      mode: 'basic',
      users: [{ name: 'alice', role: 'viewer', passwordSha256: ALICE_SHA }],
      tokens: [{ name: 'ci', role: 'operator', tokenSha256: sha256Hex('s3cret-token') }],
    });
    expect(JSON.stringify(auth)).not.toContain('wonderland');
    expect(JSON.stringify(auth)).not.toContain('s3cret-token');
  });

  it('accepts passwordHash as sha256:<hex>, in either letter case', () => {
    const auth = parseAuth({
      users: [{ name: 'alice', passwordHash: `sha256:${ALICE_SHA.toUpperCase()}`, role: 'admin' }],
    });
    expect(auth.users[0]?.passwordSha256).toBe(ALICE_SHA);
  });

  it('turns the basic and token shorthands into admin credentials listed first', () => {
    const auth = parseAuth({
      basic: { username: 'root', password: 'pw' },
      token: 'tok',
      users: [{ name: 'bob', password: 'b', role: 'viewer' }],
    });
    expect(auth.users.map((u) => [u.name, u.role])).toEqual([
      ['root', 'admin'],
      ['bob', 'viewer'],
    ]);
    expect(auth.tokens).toEqual([
      { name: 'auth.token', role: 'admin', tokenSha256: sha256Hex('tok') },
    ]);
  });

  const modeCases: [ConfigInput['auth'], string][] = [
    [{ users: [{ name: 'a', password: 'p', role: 'viewer' }] }, 'basic'],
    [{ tokens: [{ name: 't', token: 'x', role: 'viewer' }] }, 'bearer'],
    [{ token: 'x', basic: { username: 'a', password: 'p' } }, 'basic'],
    [{ mode: 'none', token: 'x' }, 'none'],
    [{ mode: 'bearer', token: 'x', basic: { username: 'a', password: 'p' } }, 'bearer'],
  ];
  it.each(modeCases)('decides the mode of %j as %s', (input, mode) => {
    expect(parseAuth(input).mode).toBe(mode);
  });

  it('requires a user for basic and a token for bearer, saying how to add one', () => {
    expect(problems({ mode: 'basic', tokens: [{ name: 't', token: 'x', role: 'admin' }] })).toEqual(
      [expect.stringMatching(/^mode: basic needs at least one user: add one under auth\.users/)],
    );
    expect(problems({ mode: 'bearer' })).toEqual([
      expect.stringMatching(/^mode: bearer needs at least one token: .*SVC_AUTH_TOKEN/),
    ]);
  });

  it('rejects an unknown mode and an unknown role, listing the valid ones', () => {
    expect(problems({ mode: 'oidc' })).toEqual(['mode: use none, basic or bearer']);
    expect(problems({ users: [{ name: 'a', password: 'p', role: 'root' }] })).toEqual([
      'users.0.role: use one of admin, manager, operator, viewer',
    ]);
  });

  it('requires exactly one of password and passwordHash', () => {
    expect(problems({ users: [{ name: 'a', role: 'admin' }] })).toEqual([
      'users.0.password: give the user a password or a passwordHash',
    ]);
    expect(
      problems({
        users: [{ name: 'a', password: 'p', passwordHash: `sha256:${ALICE_SHA}`, role: 'admin' }],
      }),
    ).toEqual(['users.0.password: give either password or passwordHash, not both']);
  });

  it('rejects a passwordHash that is not sha256:<64 hex digits>', () => {
    expect(problems({ users: [{ name: 'a', passwordHash: 'md5:abc', role: 'admin' }] })).toEqual([
      expect.stringMatching(/^users\.0\.passwordHash: use sha256:<64 hex digits>/),
    ]);
  });

  it('rejects a user name with ":" and duplicate user and token names', () => {
    expect(problems({ users: [{ name: 'a:b', password: 'p', role: 'admin' }] })).toEqual([
      expect.stringMatching(/^users\.0\.name: use a user name without ":"/),
    ]);
    expect(
      problems({
        users: [
          { name: 'a', password: 'p', role: 'admin' },
          { name: 'a', password: 'q', role: 'viewer' },
        ],
        tokens: [
          { name: 't', token: 'x', role: 'admin' },
          { name: 't', token: 'y', role: 'admin' },
        ],
      }),
    ).toEqual([
      'users.1.name: rename or remove this user: the name "a" is already used',
      'tokens.1.name: rename or remove this token: the name "t" is already used',
    ]);
  });

  it('rejects a basic shorthand user that auth.users already has', () => {
    expect(
      problems({
        basic: { username: 'a', password: 'p' },
        users: [{ name: 'a', password: 'q', role: 'viewer' }],
      }),
    ).toEqual(['basic.username: use another name: auth.users already has a user "a"']);
  });

  it('rejects two tokens with the same value, without showing it', () => {
    const found = problems({
      token: 'same',
      tokens: [
        { name: 'a', token: 'other', role: 'viewer' },
        { name: 'b', token: 'same', role: 'viewer' },
      ],
    });
    expect(found).toEqual([
      'tokens.1.token: use a different token: another configured token has the same value',
    ]);
  });
});
