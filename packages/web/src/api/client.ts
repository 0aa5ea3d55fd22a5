import type { CredentialStore } from './credentials';
import { takePrefetched } from './prefetch';

/** An API answer that is not 2xx: the spec's error body, or what could be made of the response. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface ApiClientOptions {
  readonly apiBase: string;
  readonly credentials: CredentialStore;
  /** Send cookies (the OIDC session). Off otherwise, so a 401 never opens the browser's prompt. */
  readonly withCookies: boolean;
  /** Called on every 401, so the app can show its login. */
  readonly onUnauthorized: () => void;
  readonly fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | undefined>;

const queryString = (q: Query | undefined): string => {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
};

/** A thin fetch wrapper over `/api/v2`: JSON in and out, errors as {@link ApiError}. */
export class ApiClient {
  constructor(private readonly opts: ApiClientOptions) {}

  url(path: string, query?: Query): string {
    return `${this.opts.apiBase}${path}${queryString(query)}`;
  }

  async request<T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const auth = this.opts.credentials.get();
    if (auth) headers.Authorization = auth;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const doFetch = this.opts.fetch ?? fetch;
    let res: Response;
    try {
      const url = this.url(path, opts.query);
      const early = method === 'GET' ? takePrefetched(url, auth) : undefined;
      res = await (early ??
        doFetch(url, {
          method,
          headers,
          credentials: this.opts.withCookies ? 'same-origin' : 'omit',
          ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        }));
    } catch (e) {
      throw new ApiError(0, 'network_error', `cannot reach the server: ${(e as Error).message}`);
    }
    const text = await res.text();
    let json: unknown = undefined;
    if (text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    if (!res.ok) {
      const body = (json ?? {}) as { code?: string; message?: string };
      if (res.status === 401) this.opts.onUnauthorized();
      throw new ApiError(
        res.status,
        body.code ?? `http_${res.status}`,
        body.message ?? (text.slice(0, 200) || res.statusText || `HTTP ${res.status}`),
      );
    }
    return json as T;
  }

  /** Opens a stream (Server-Sent Events) with the same credentials; a non-2xx is an ApiError. */
  async openStream(path: string, signal: AbortSignal, query?: Query): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    const auth = this.opts.credentials.get();
    if (auth) headers.Authorization = auth;
    const res = await (this.opts.fetch ?? fetch)(this.url(path, query), {
      headers,
      signal,
      credentials: this.opts.withCookies ? 'same-origin' : 'omit',
    });
    if (!res.ok) {
      if (res.status === 401) this.opts.onUnauthorized();
      throw new ApiError(res.status, `http_${res.status}`, `${path}: HTTP ${res.status}`);
    }
    return res;
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, query ? { query } : {});
  }
  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, { body });
  }
  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }
  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body });
  }
  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path);
  }
}

/** Encodes one path segment (DAG names, run ids and step names may hold spaces). */
export const seg = (s: string): string => encodeURIComponent(s);
