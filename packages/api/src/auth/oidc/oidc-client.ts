import type * as Jose from 'jose';
import type * as Oc from 'openid-client';
import type { OidcConfig } from '@trellis/core';

/*
 * The OpenID Connect client, on well-kept libraries (docs/decisions.md, "OIDC on openid-client
 * and jose"): openid-client does discovery, the authorization URL, and the code exchange with its
 * checks (state, PKCE, nonce, issuer, audience, expiry, authorized party, signing algorithm);
 * jose then verifies the ID token's signature against the issuer's JWKS, refetching the key set
 * when a token names a key it has not seen (key rotation at the issuer).
 */

export type Claims = Jose.JWTPayload;

let libraries: Promise<{ oc: typeof Oc; jose: typeof Jose }> | undefined;
/**
 * openid-client and jose, loaded with the first sign-in, not with the server: a server without
 * OIDC sign-ins (the default) would hold them in its heap for nothing (~1.2 MB; docs/decisions.md,
 * "The heap tuned before the CLI loads").
 */
const oidcLibraries = (): Promise<{ oc: typeof Oc; jose: typeof Jose }> =>
  (libraries ??= Promise.all([import('openid-client'), import('jose')]).then(
    ([oc, jose]) => ({ oc, jose }),
    (e: unknown) => {
      libraries = undefined; // a failed load (EMFILE, say) is tried again at the next sign-in
      // the code only: the message of a missing module names a path on the server
      const code = (e as { code?: unknown } | undefined)?.code;
      throw new Error(
        `the OIDC libraries (openid-client, jose) cannot be loaded (${typeof code === 'string' ? code : 'error'}): reinstall trellis, then sign in again`,
        { cause: e },
      );
    },
  ));

/** Asymmetric signatures only: never `none`, never a MAC keyed with the client secret. */
const SIGNING_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

export interface OidcClientOptions {
  /** Least time between two fetches of the issuer's keys, ms. @default 30_000 */
  readonly jwksCooldownMs?: number;
  /** Allowed clock difference on token times, seconds. @default 60 */
  readonly skewSec?: number;
}

interface Issuer {
  readonly config: Oc.Configuration;
  readonly keys: ReturnType<typeof Jose.createRemoteJWKSet>;
  readonly algorithms: string[];
}

/** Discovery (once, retried after a failure), sign-in URLs and the code exchange. */
export class OidcClient {
  #issuer: Promise<Issuer> | undefined;

  constructor(
    private readonly cfg: OidcConfig,
    private readonly opts: OidcClientOptions = {},
  ) {}

  #discover(): Promise<Issuer> {
    this.#issuer ??= (async (): Promise<Issuer> => {
      const { oc, jose } = await oidcLibraries();
      const insecure = this.cfg.issuer.startsWith('http:');
      let config: Oc.Configuration;
      try {
        config = await oc.discovery(
          new URL(this.cfg.issuer),
          this.cfg.clientId,
          undefined,
          oc.ClientSecretBasic(this.cfg.clientSecret),
          insecure ? { execute: [oc.allowInsecureRequests] } : undefined,
        );
      } catch (e) {
        throw new Error(
          `cannot read the OIDC discovery document of ${this.cfg.issuer}: ${(e as Error).message}`,
        );
      }
      const meta = config.serverMetadata();
      if (!meta.jwks_uri) throw new Error(`the OIDC issuer ${meta.issuer} publishes no jwks_uri`);
      const offered = meta.id_token_signing_alg_values_supported ?? ['RS256'];
      return {
        config,
        keys: jose.createRemoteJWKSet(new URL(meta.jwks_uri), {
          cooldownDuration: this.opts.jwksCooldownMs ?? 30_000,
        }),
        algorithms: offered.filter((a) => SIGNING_ALGS.includes(a)),
      };
    })().catch((e: unknown) => {
      this.#issuer = undefined; // try again on the next sign-in
      throw e;
    });
    return this.#issuer;
  }

  /** Fresh state, nonce and PKCE code verifier for one sign-in. */
  async flowSecrets(): Promise<{ state: string; nonce: string; verifier: string }> {
    const { oc } = await oidcLibraries();
    return {
      state: oc.randomState(),
      nonce: oc.randomNonce(),
      verifier: oc.randomPKCECodeVerifier(),
    };
  }

  /** The authorization request URL (code flow with PKCE S256). */
  async authorizationUrl(p: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeVerifier: string;
  }): Promise<string> {
    const { config } = await this.#discover();
    const { oc } = await oidcLibraries();
    return oc
      .buildAuthorizationUrl(config, {
        redirect_uri: p.redirectUri,
        scope: this.cfg.scopes.join(' '),
        state: p.state,
        nonce: p.nonce,
        code_challenge: await oc.calculatePKCECodeChallenge(p.codeVerifier),
        code_challenge_method: 'S256',
      })
      .toString();
  }

  /**
   * Exchanges the code of `callbackUrl` for tokens and resolves with the ID token's claims once
   * every check holds.
   * @throws Error saying which check failed.
   */
  async signIn(
    callbackUrl: URL,
    checks: { readonly state: string; readonly nonce: string; readonly codeVerifier: string },
  ): Promise<Claims> {
    const { config, keys, algorithms } = await this.#discover();
    const { oc, jose } = await oidcLibraries();
    const tokens = await oc
      .authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      })
      .catch((e: unknown) => {
        throw new Error(`the OIDC sign-in was refused: ${describe(e)}`);
      });
    const idToken = tokens.id_token ?? '';
    try {
      const { payload } = await jose.jwtVerify(idToken, keys, {
        issuer: config.serverMetadata().issuer,
        audience: this.cfg.clientId,
        algorithms,
        clockTolerance: this.opts.skewSec ?? 60,
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      return payload;
    } catch (e) {
      throw new Error(`the ID token does not verify: ${describe(e)}`);
    }
  }
}

/**
 * The most specific message of the library's error chain (openid-client wraps the check that
 * failed), with the claim or header parameter it names when there is one.
 */
const describe = (e: unknown): string => {
  let err: unknown = e;
  let message = e instanceof Error ? e.message : String(e);
  let claim = '';
  for (let depth = 0; depth < 5 && err && typeof err === 'object'; depth++) {
    if (err instanceof Error) message = err.message;
    const c = err as { claim?: unknown; cause?: unknown };
    if (typeof c.claim === 'string') claim = c.claim;
    err = c.cause;
  }
  return claim && !message.includes(`"${claim}"`) ? `${message} ("${claim}")` : message;
};
