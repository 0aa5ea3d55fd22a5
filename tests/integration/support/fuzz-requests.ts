/**
 * A seeded generator of malformed HTTP requests for the API fuzz test: the same seed gives the
 * same requests, so a failure found once can be replayed. Pure: it builds request descriptions,
 * sending them is the caller's business.
 */

/** One request to send. `path` is raw (already percent-encoded where needed). */
export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** The route template it was made from, for coverage. */
  readonly route: string;
}

/** A route as the generator sees it: a method and an Express path (`/dags/:fileName`). */
export interface FuzzRoute {
  readonly method: string;
  readonly path: string;
}

/** Values that exist on the server under test, so some requests get past the 404s. */
export interface FuzzTargets {
  /** Path parameter name → real values (`fileName` → `['fuzz-a']`). */
  readonly params: Readonly<Record<string, readonly string[]>>;
}

/** mulberry32: a small, fast, seeded PRNG (public domain). */
const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chance = (r: Rand, p: number): boolean => r() < p;
const enc = (s: string): string => encodeURIComponent(s);

/** Path segments a server must refuse cleanly (or 404), never with a 5xx. */
const BAD_SEGMENTS: readonly ((r: Rand) => string)[] = [
  (r) => 'a'.repeat(pick(r, [41, 65, 251, 300, 1_000, 5_000])),
  () => '%ZZ',
  () => '%',
  () => 'a%2',
  () => '%C0%AF',
  () => '%E0%A4%A',
  () => '%FF%FE',
  () => '%00',
  () => 'a%00b',
  () => '..',
  () => '%2E%2E',
  () => '..%2F..%2Fetc%2Fpasswd',
  () => '%2F',
  () => enc('名前'),
  () => enc('😀'.repeat(20)),
  () => enc('\u202e\u0000\uffff'),
  () => '\u00e9t\u00e9', // raw latin1 bytes, not UTF-8
  () => enc(' '),
  () => enc('a b'),
  () => 'a.b',
  () => '-',
  () => '_',
  () => enc('$(id)'),
  () => enc('`id`'),
  () => enc("'; DROP TABLE x; --"),
  () => enc('<script>'),
  () => '%25',
  () => 'search',
  () => 'tags',
  () => 'latest',
  () => enc('{}'),
  () => '0',
  () => '-1',
  () => '1e999',
];

const segment = (r: Rand, name: string, targets: FuzzTargets): string => {
  const real = targets.params[name];
  if (real && real.length > 0 && chance(r, 0.35)) return enc(pick(r, real));
  return pick(r, BAD_SEGMENTS)(r);
};

const QUERY_KEYS = [
  'page',
  'perPage',
  'name',
  'tag',
  'sort',
  'order',
  'q',
  'remoteNode',
  'status',
  'fromDate',
  'toDate',
  'dagRunId',
  'tail',
  'head',
  'offset',
  'limit',
  'stream',
  'wait',
  'unknown',
] as const;

const QUERY_VALUES: readonly ((r: Rand) => string)[] = [
  () => '',
  () => '0',
  () => '-1',
  () => '1.5',
  () => 'NaN',
  () => 'Infinity',
  () => '1e309',
  () => '99999999999999999999999',
  () => '10001',
  () => 'abc',
  () => 'true',
  () => '%ZZ',
  () => '%',
  () => '%00',
  (r) => 'x'.repeat(pick(r, [1_000, 20_000])),
  () => enc('/(a+)+$/'),
  () => enc('/(a)\\1/'),
  () => enc('/[/'),
  () => enc('//'),
  () => enc('/(?=x)/'),
  () => enc('/.*/'),
  () => enc('/a{1000}{1000}/'),
  () => enc('名'),
  () => 'local',
  () => 'nowhere',
  () => 'stderr',
  () => 'nextRun',
  () => 'desc',
];

const query = (r: Rand): string => {
  if (chance(r, 0.3)) return '';
  const n = 1 + Math.floor(r() * 4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = pick(r, QUERY_KEYS);
    // a repeated key makes an array value; a key without "=" an empty one
    parts.push(chance(r, 0.1) ? key : `${key}=${pick(r, QUERY_VALUES)(r)}`);
    if (chance(r, 0.1)) parts.push(`${key}=${pick(r, QUERY_VALUES)(r)}`);
  }
  return `?${parts.join('&')}`;
};

const BODY_FIELDS = [
  'name',
  'spec',
  'params',
  'dagRunId',
  'singleton',
  'queue',
  'newFileName',
  'suspend',
  'status',
] as const;

const deep = (depth: number): unknown => {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

const VALUES: readonly ((r: Rand) => unknown)[] = [
  () => null,
  () => true,
  () => 0,
  () => -1,
  () => 1.5,
  () => 6,
  () => 1e308,
  () => '',
  () => '   ',
  () => 'x',
  () => 'a'.repeat(41),
  (r) => 'b'.repeat(pick(r, [65, 300, 100_000, 1_000_000])),
  () => 'a\u0000b',
  () => '名前😀',
  () => '{"a":',
  () => '{"A":"1"}',
  () => 'steps: [',
  () => 'steps:\n  - {name: s, command: "true", depends: [s]}\n',
  () => '- just\n- a list\n',
  () => `${'a: &a [1]\n'}b: [*a, *a, *a]\n`,
  () => [],
  () => ['x'],
  () => ({}),
  () => ({ nested: { x: 1 } }),
  (r) => deep(pick(r, [50, 1_000])),
];

/** A JSON body: an object with some known fields set to odd values, or not an object at all. */
const jsonBody = (r: Rand): unknown => {
  if (chance(r, 0.15)) return pick(r, VALUES)(r);
  const o: Record<string, unknown> = {};
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) o[pick(r, BODY_FIELDS)] = pick(r, VALUES)(r);
  if (chance(r, 0.05)) return JSON.parse(`{"__proto__":{"name":"x"},"constructor":{}}`) as unknown;
  return o;
};

const RAW_BODIES: readonly ((r: Rand) => string | Buffer)[] = [
  () => '',
  () => '{',
  () => '{"a":',
  () => 'nul',
  () => '\u0000',
  () => "{'single':'quotes'}",
  () => '{"a":1,}',
  () => '[1,2',
  () => 'name=x&spec=y',
  () => Buffer.from([0xff, 0xfe, 0x00, 0x7b]),
  () => Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01]),
  (r) => `${'['.repeat(pick(r, [10_000, 100_000]))}${']'.repeat(10)}`,
  // valid JSON nested deeper than a recursive walk (JSON.stringify, a naive validator) survives
  (r) => {
    const n = pick(r, [20_000, 100_000]);
    return `{"${pick(r, BODY_FIELDS)}":${'['.repeat(n)}${']'.repeat(n)}}`;
  },
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
  ';;;',
] as const;

const body = (r: Rand, headers: Record<string, string>): Buffer | undefined => {
  const kind = r();
  if (kind < 0.15) return undefined;
  const ct = pick(r, CONTENT_TYPES);
  if (ct !== '') headers['content-type'] = ct;
  if (chance(r, 0.04)) headers['content-encoding'] = pick(r, ['gzip', 'deflate', 'br', 'x-nope']);
  if (kind < 0.4) {
    const raw = pick(r, RAW_BODIES)(r);
    return typeof raw === 'string' ? Buffer.from(raw) : raw;
  }
  if (kind < 0.41) return Buffer.alloc(11 * 1024 * 1024, 0x20); // over the 10 MB limit
  return Buffer.from(JSON.stringify(jsonBody(r)));
};

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * `count` requests over `routes`, round-robin so each route gets its share, every part malformed
 * at random: path parameters, query, body, content type, sometimes the method.
 */
export const fuzzRequests = (
  seed: number,
  count: number,
  routes: readonly FuzzRoute[],
  targets: FuzzTargets,
): FuzzRequest[] => {
  const r = seededRandom(seed);
  const out: FuzzRequest[] = [];
  for (let i = 0; i < count; i++) {
    const route = routes[i % routes.length]!;
    const path = route.path.replace(/:(\w+)/g, (_m, name: string) => segment(r, name, targets));
    const headers: Record<string, string> = {};
    const method = chance(r, 0.15) ? pick(r, METHODS) : route.method.toUpperCase();
    const b = body(r, headers);
    if (chance(r, 0.05)) headers.authorization = pick(r, ['Basic %%%', 'Bearer ', 'Digest x']);
    out.push({
      method,
      path: `/api/v2${path}${query(r)}${chance(r, 0.03) ? '#frag' : ''}`,
      headers,
      ...(b ? { body: b } : {}),
      route: `${route.method.toUpperCase()} ${route.path}`,
    });
  }
  return out;
};
