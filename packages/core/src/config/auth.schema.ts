import { createHash } from 'node:crypto';
import * as z from 'zod';
import { checkUniqueNames, section, text } from './schema-helpers.js';

/*
 * `auth` of config.yaml (docs/decisions.md, spec: Authentication). Secrets are reduced to
 * SHA-256 digests while parsing, so the frozen Config never holds a password or token in clear.
 */

/** Authentication modes. `none` is the default for local development (spec: Authentication). */
export const AUTH_MODES = ['none', 'basic', 'bearer'] as const;
/** How the API authenticates callers: not at all, HTTP Basic, or Bearer tokens. */
export type AuthMode = (typeof AUTH_MODES)[number];

/**
 * Roles, from most to least powerful (docs/decisions.md): `admin` everything, `manager`
 * edits DAGs and runs them, `operator` runs, stops, enqueues and retries, `viewer` reads.
 */
export const ROLES = ['admin', 'manager', 'operator', 'viewer'] as const;
/** A caller's role; what each may do is decided by the API's authenticator. */
export type Role = (typeof ROLES)[number];

/** One user for HTTP Basic authentication. */
export interface AuthUserConfig {
  /** User name as sent in `Authorization: Basic`; unique, without `:`. */
  name: string;
  role: Role;
  /** Lowercase hex SHA-256 digest of the password (from `password` or `passwordHash`). */
  passwordSha256: string;
}

/** One Bearer token. */
export interface AuthTokenConfig {
  /** Who the token belongs to, for messages; unique. The `auth.token` shorthand is named `auth.token`. */
  name: string;
  role: Role;
  /** Lowercase hex SHA-256 digest of the token. */
  tokenSha256: string;
}

/** OpenID Connect sign-in for the web UI (`auth.oidc`). */
export interface OidcConfig {
  /** Issuer URL; its `/.well-known/openid-configuration` is read at the first sign-in. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Requested scopes; `openid` is always included. */
  scopes: string[];
  /** Public URL of this server (scheme, host, port, base path); `''` = taken from the request. */
  clientUrl: string;
  /** Who may sign in: e-mail addresses, user names or subjects; `[]` = anyone the issuer accepts. */
  allowedUsers: string[];
  /** The ID-token claim holding the user's roles or groups (a string or a list). */
  roleClaim: string;
  /** Claim value -> role; a claim value that is itself a role name maps to that role. */
  roleMap: Record<string, Role>;
  /** Role of a user whose claims map to none. */
  defaultRole: Role;
  /** How long a sign-in lasts, in seconds. */
  sessionTtlSec: number;
  /** Key that signs the session cookie; `''` = a random key per process (sessions end on restart). */
  sessionSecret: string;
}

/** The parsed `auth` section. */
export interface AuthConfig {
  /**
   * Which scheme the 401 challenge (`WWW-Authenticate`) asks for. Either mode accepts every
   * configured credential, users and tokens alike; `none` turns authentication off.
   */
  mode: AuthMode;
  users: AuthUserConfig[];
  tokens: AuthTokenConfig[];
  /** OpenID Connect sign-in for the web UI, when configured. */
  oidc?: OidcConfig;
}

/** The name the `auth.token` shorthand (`SVC_AUTH_TOKEN`) gets. */
export const SHORTHAND_TOKEN_NAME = 'auth.token';

const ROLE_HINT = `use one of ${ROLES.join(', ')}`;
const HASH_PATTERN = /^sha256:[0-9a-fA-F]{64}$/;

/** Lowercase hex SHA-256 of UTF-8 text. */
export const sha256Hex = (value: string): string =>
  createHash('sha256').update(value, 'utf8').digest('hex');

const role = () => z.enum(ROLES, { error: ROLE_HINT });

const userEntryShape = {
  /** User name; unique; no `:` (HTTP Basic splits on the first one). */
  name: text('a user name, e.g. alice').refine((n) => !n.includes(':'), {
    error: 'use a user name without ":" (HTTP Basic separates name and password with it)',
  }),
  /** The password in clear; give this or `passwordHash`. */
  password: text('a non-empty password').optional(),
  /** `sha256:<64 hex digits>` of the password; give this or `password`. */
  passwordHash: z
    .string({ error: 'use sha256:<64 hex digits>' })
    .regex(HASH_PATTERN, {
      error: 'use sha256:<64 hex digits>, e.g. the output of: printf %s "$PASSWORD" | sha256sum',
    })
    .optional(),
  /** What the user may do. */
  role: role(),
};

const UserSchema = section(userEntryShape)
  .superRefine((u, ctx) => {
    if ((u.password === undefined) === (u.passwordHash === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['password'],
        message:
          u.password === undefined
            ? 'give the user a password or a passwordHash'
            : 'give either password or passwordHash, not both',
      });
    }
  })
  // The refinement above guarantees one of the two is set.
  .transform((u): AuthUserConfig => ({
    name: u.name,
    role: u.role,
    passwordSha256:
      u.passwordHash !== undefined
        ? u.passwordHash.slice('sha256:'.length).toLowerCase()
        : sha256Hex(u.password ?? ''),
  }));

const tokenEntryShape = {
  /** Who the token belongs to (shown in 403 messages); unique. */
  name: text('a token name, e.g. ci-pipeline'),
  /** The token as sent in `Authorization: Bearer <token>`. */
  token: text('a non-empty token string'),
  /** What the token may do. */
  role: role(),
};

const TokenSchema = section(tokenEntryShape).transform((t): AuthTokenConfig => ({
  name: t.name,
  role: t.role,
  tokenSha256: sha256Hex(t.token),
}));

const basicShape = {
  /** Name of the admin user this shorthand adds. */
  username: text('a user name, e.g. admin').refine((n) => !n.includes(':'), {
    error: 'use a user name without ":"',
  }),
  /** Its password. */
  password: text('the password of auth.basic.username (SVC_AUTH_BASIC_PASSWORD)'),
};

const oidcShape = {
  /** Issuer URL, e.g. https://accounts.example.com. */
  issuer: text('the issuer URL, e.g. https://accounts.example.com').refine(
    (u) => /^https?:\/\/[^/\s]+/.test(u),
    { error: 'use the issuer URL with http:// or https://, e.g. https://accounts.example.com' },
  ),
  /** Client id registered at the issuer. */
  clientId: text('the client id registered at the issuer'),
  /** Client secret registered at the issuer. */
  clientSecret: text('the client secret registered at the issuer'),
  /** @default `['openid', 'profile', 'email']` */
  scopes: z
    .array(text('a scope name such as email'), {
      error: 'use a list of scopes, e.g. [openid, email]',
    })
    .default(['openid', 'profile', 'email'])
    .transform((l) => (l.includes('openid') ? l : ['openid', ...l])),
  /** Public URL of this server; the redirect URI is `<clientUrl>/auth/oidc/callback`. @default `''` */
  clientUrl: z
    .string({ error: 'use the public URL of this server, e.g. https://trellis.example.com' })
    .refine((u) => u === '' || /^https?:\/\/[^/\s]+/.test(u), {
      error: 'use the public URL of this server with http:// or https://',
    })
    .transform((u) => u.replace(/\/+$/, ''))
    .default(''),
  /** E-mail addresses, user names or subjects allowed to sign in; `[]` = everyone. @default `[]` */
  allowedUsers: z
    .array(text('an e-mail address or user name'), { error: 'use a list of e-mail addresses' })
    .default([]),
  /** @default `'roles'` */
  roleClaim: text('a claim name such as roles or groups').default('roles'),
  /** Claim value -> role. @default `{}` */
  roleMap: z
    .record(text('a claim value'), role(), {
      error: 'use a mapping of claim values to roles, e.g. trellis-admins: admin',
    })
    .default({}),
  /** @default `'viewer'` */
  defaultRole: role().default('viewer'),
  /** @default `86400` (one day) */
  sessionTtlSec: z
    .number({ error: 'use a number of seconds, e.g. 86400' })
    .int({ error: 'use a whole number of seconds' })
    .min(60, { error: 'use at least 60 seconds' })
    .default(86_400),
  /** @default `''` (a random key per process) */
  sessionSecret: z
    .string({ error: 'use a long random string' })
    .refine((s) => s === '' || s.length >= 32, { error: 'use at least 32 characters' })
    .default(''),
};

/** The keys `auth` accepts in the file. */
export const authShape = {
  /**
   * `none`, `basic` or `bearer`. When absent: `basic` if any user is configured, else `bearer` if
   * any token is, else `none`.
   */
  mode: z.enum(AUTH_MODES, { error: 'use none, basic or bearer' }).optional(),
  /** Users for HTTP Basic, each with a role. @default `[]` */
  users: z.array(UserSchema, { error: 'use a list of users, e.g. - name: alice' }).default([]),
  /** Bearer tokens, each with a role. @default `[]` */
  tokens: z.array(TokenSchema, { error: 'use a list of tokens, e.g. - name: ci' }).default([]),
  /** Shorthand for one `admin` user (`SVC_AUTH_BASIC_USERNAME`, `SVC_AUTH_BASIC_PASSWORD`). */
  basic: section(basicShape).optional(),
  /** Shorthand for one `admin` token named `auth.token` (`SVC_AUTH_TOKEN`). */
  token: text('a non-empty token string').optional(),
  /** OpenID Connect sign-in for the web UI. */
  oidc: section(oidcShape).optional(),
};

/** Keys of the mappings inside `auth`, for "did you mean" hints. */
export const AUTH_SUBKEYS = {
  'auth.users.[]': Object.keys(userEntryShape),
  'auth.tokens.[]': Object.keys(tokenEntryShape),
  'auth.basic': Object.keys(basicShape),
  'auth.oidc': Object.keys(oidcShape),
} as const;

/** `auth`: credentials folded into `users` and `tokens`, `mode` decided. */
export const AuthSchema = section(authShape)
  .superRefine((a, ctx) => {
    checkUniqueNames(a.users, ctx, 'user', ['users']);
    checkUniqueNames(a.tokens, ctx, 'token', ['tokens']);
    if (a.basic && a.users.some((u) => u.name === a.basic?.username)) {
      ctx.addIssue({
        code: 'custom',
        path: ['basic', 'username'],
        message: `use another name: auth.users already has a user "${a.basic.username}"`,
      });
    }
    const digests = a.tokens.map((t) => t.tokenSha256);
    if (a.token !== undefined) digests.unshift(sha256Hex(a.token));
    digests.forEach((d, i) => {
      if (digests.indexOf(d) !== i) {
        const index = a.token !== undefined ? i - 1 : i;
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', index, 'token'],
          message: 'use a different token: another configured token has the same value',
        });
      }
    });
    const hasUsers = a.users.length > 0 || a.basic !== undefined;
    const hasTokens = a.tokens.length > 0 || a.token !== undefined;
    if (a.mode === 'basic' && !hasUsers) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message:
          'basic needs at least one user: add one under auth.users, or set ' +
          'SVC_AUTH_BASIC_USERNAME and SVC_AUTH_BASIC_PASSWORD',
      });
    }
    if (a.mode === 'bearer' && !hasTokens) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message:
          'bearer needs at least one token: add one under auth.tokens, or set SVC_AUTH_TOKEN',
      });
    }
  })
  .transform((a): AuthConfig => {
    const users = a.basic
      ? [
          {
            name: a.basic.username,
            role: 'admin' as const,
            passwordSha256: sha256Hex(a.basic.password),
          },
          ...a.users,
        ]
      : a.users;
    const tokens =
      a.token !== undefined
        ? [
            { name: SHORTHAND_TOKEN_NAME, role: 'admin' as const, tokenSha256: sha256Hex(a.token) },
            ...a.tokens,
          ]
        : a.tokens;
    // OIDC alone still turns authentication on: API callers then need the session cookie.
    const mode =
      a.mode ??
      (users.length > 0 ? 'basic' : tokens.length > 0 || a.oidc !== undefined ? 'bearer' : 'none');
    return { mode, users, tokens, ...(a.oidc ? { oidc: a.oidc } : {}) };
  });
