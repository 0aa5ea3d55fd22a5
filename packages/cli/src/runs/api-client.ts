import { ExitCode } from '../io.js';

/** What the client parses answers with: a zod schema of @trellis/contract, seen structurally. */
export interface AnswerSchema<T> {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
}

/** A request to the server that did not give what was asked; `exitCode` says which kind. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** The spec error code of a refusal (`not_found`, ...), when the server sent one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * The API base of `--server`: `http(s)://host:port[/basePath]`, `/api/v2` appended unless given.
 * Throws a usage-worthy message for anything else.
 */
const apiBaseOf = (server: string): string => {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new ApiError(
      `--server ${JSON.stringify(server)} is not a URL; write it as http://host:port, e.g. --server http://127.0.0.1:8080`,
      ExitCode.Usage,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ApiError(
      `--server ${JSON.stringify(server)} must start with http:// or https://`,
      ExitCode.Usage,
    );
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith('/api/v2') ? path : `${path}/api/v2`}`;
};

/** Why a refusal with this HTTP status is not the run's or the request's fault. */
const isServerSide = (status: number): boolean => status === 401 || status === 403 || status >= 500;

/** A JSON client of the REST API (spec: Endpoints) with an optional Bearer token. */
export class ApiClient {
  readonly base: string;

  constructor(
    server: string,
    private readonly token: string | undefined,
  ) {
    this.base = apiBaseOf(server);
  }

  /**
   * Calls `method path` and parses the answer's `key` field (the whole answer without `key`) with
   * `schema`; every failure is an ApiError.
   */
  async call<T>(
    method: string,
    path: string,
    answer: { schema: AnswerSchema<T>; key?: string },
    body?: unknown,
  ): Promise<T> {
    const what = `${method} ${this.base}${path}`;
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
      throw new ApiError(`cannot reach the server at ${this.base}: ${cause}`, ExitCode.ServerError);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new ApiError(
        `${what} answered ${res.status} with something that is not JSON: is ${this.base} the Trellis API?`,
        ExitCode.ServerError,
      );
    }
    if (!res.ok) throw await this.refusal(res.status, json);
    const value =
      answer.key === undefined ? json : (json as Record<string, unknown> | null)?.[answer.key];
    const parsed = answer.schema.safeParse(value);
    if (!parsed.success)
      throw new ApiError(
        `${what} answered in an unexpected shape (${parsed.error.issues[0]?.message ?? 'invalid'}): is the server a Trellis of this version?`,
        ExitCode.ServerError,
      );
    return parsed.data;
  }

  private async refusal(status: number, json: unknown): Promise<ApiError> {
    // the wire schemas (zod) load with the first call, not with `trellis --help`
    const { ErrorBody } = await import('./wire-schemas.js');
    const body = ErrorBody.safeParse(json);
    const message = body.success ? body.data.message : `HTTP ${status}`;
    const hint =
      status === 401
        ? this.token
          ? ': the token was refused; check --token or SVC_API_TOKEN'
          : ': the server needs a token; pass --token <token> or set SVC_API_TOKEN'
        : '';
    return new ApiError(
      `the server refused: ${message}${hint}`,
      isServerSide(status) ? ExitCode.ServerError : ExitCode.Failure,
      body.success ? body.data.code : undefined,
    );
  }
}
