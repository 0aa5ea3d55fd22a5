import type { JsonWebKey } from 'node:crypto';
import type { OidcConfig } from '@trellis/core';

/** The parts of the issuer's discovery document that sign-in needs. */
export interface OidcMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly jwks_uri: string;
}

const getJson = async (fetcher: typeof fetch, url: string, what: string): Promise<unknown> => {
  let res: Response;
  try {
    res = await fetcher(url, { headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new Error(
      `cannot reach the OIDC issuer for its ${what} (${url}): ${(e as Error).message}`,
    );
  }
  if (!res.ok) throw new Error(`the OIDC issuer answered ${res.status} for its ${what} (${url})`);
  return res.json();
};

/** Discovery (once) and the keys (refetched when a token names an unknown key). */
export class OidcClient {
  #meta: Promise<OidcMetadata> | undefined;
  #keys: JsonWebKey[] = [];

  constructor(
    private readonly cfg: OidcConfig,
    private readonly fetcher: typeof fetch = fetch,
  ) {}

  metadata(): Promise<OidcMetadata> {
    this.#meta ??= (async () => {
      const url = `${this.cfg.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
      const m = (await getJson(this.fetcher, url, 'discovery document')) as Partial<OidcMetadata>;
      for (const k of ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const)
        if (typeof m[k] !== 'string')
          throw new Error(`the OIDC discovery document ${url} has no ${k}`);
      return m as OidcMetadata;
    })().catch((e: unknown) => {
      this.#meta = undefined; // try again on the next sign-in
      throw e;
    });
    return this.#meta;
  }

  async keys(refresh: boolean): Promise<JsonWebKey[]> {
    if (refresh || this.#keys.length === 0) {
      const m = await this.metadata();
      const doc = (await getJson(this.fetcher, m.jwks_uri, 'keys')) as { keys?: JsonWebKey[] };
      this.#keys = doc.keys ?? [];
    }
    return this.#keys;
  }

  /** The authorization request URL (code flow with PKCE S256). */
  async authorizationUrl(p: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string;
  }): Promise<string> {
    const m = await this.metadata();
    const url = new URL(m.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.cfg.clientId);
    url.searchParams.set('redirect_uri', p.redirectUri);
    url.searchParams.set('scope', this.cfg.scopes.join(' '));
    url.searchParams.set('state', p.state);
    url.searchParams.set('nonce', p.nonce);
    url.searchParams.set('code_challenge', p.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    return url.toString();
  }

  /** Exchanges the code for tokens (client_secret_basic); resolves with the ID token. */
  async exchangeCode(p: {
    code: string;
    redirectUri: string;
    codeVerifier: string;
  }): Promise<string> {
    const m = await this.metadata();
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code: p.code,
      redirect_uri: p.redirectUri,
      code_verifier: p.codeVerifier,
    });
    const basic = Buffer.from(
      `${encodeURIComponent(this.cfg.clientId)}:${encodeURIComponent(this.cfg.clientSecret)}`,
    ).toString('base64');
    let res: Response;
    try {
      res = await this.fetcher(m.token_endpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          Authorization: `Basic ${basic}`,
        },
        body,
      });
    } catch (e) {
      throw new Error(`cannot reach the OIDC token endpoint: ${(e as Error).message}`);
    }
    const json = (await res.json().catch(() => ({}))) as {
      id_token?: string;
      error?: string;
      error_description?: string;
    };
    if (!res.ok || typeof json.id_token !== 'string')
      throw new Error(
        `the OIDC issuer refused the sign-in code: ${json.error ?? res.status}${json.error_description ? ` (${json.error_description})` : ''}`,
      );
    return json.id_token;
  }
}
