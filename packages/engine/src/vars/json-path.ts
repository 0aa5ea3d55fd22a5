/**
 * Reading into a JSON value with a path such as `.outputs.rows[0].name`, for the
 * `${VAR.path.to.field}` form of variable references (spec: Variables; as the peer does).
 */

/** One step of a JSON path: an object key or an array index (negative counts from the end). */
export type JsonPathSegment = string | number;

// `.key` (any run of characters other than `.`, `[` and `]`), `[12]`/`[-1]`, or `["key"]`.
const SEGMENT = /\.([^.[\]]+)|\[(-?\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;

/**
 * Parses a path written after a variable name (`.a.b[0]`, `[1].c`, `["x.y"]`). Returns undefined
 * when the text is not a well-formed path, so the caller leaves the reference as written.
 */
export const parseJsonPath = (path: string): JsonPathSegment[] | undefined => {
  const segments: JsonPathSegment[] = [];
  let at = 0;
  while (at < path.length) {
    SEGMENT.lastIndex = at;
    const m = SEGMENT.exec(path);
    if (!m) return undefined;
    const [whole, key, index, quoted] = m;
    if (key !== undefined) segments.push(key);
    else if (index !== undefined) segments.push(Number(index));
    else if (quoted !== undefined) segments.push(JSON.parse(quoted) as string);
    at += whole.length;
  }
  return segments.length > 0 ? segments : undefined;
};

/** The JSON value at `path`, or undefined when a segment does not exist. */
export const readJsonPath = (root: unknown, path: readonly JsonPathSegment[]): unknown => {
  let cur: unknown = root;
  for (const seg of path) {
    if (Array.isArray(cur)) {
      // `.0` on an array reads like `[0]`, as jq-style paths written by hand often do.
      const i = typeof seg === 'number' ? seg : /^-?\d+$/.test(seg) ? Number(seg) : NaN;
      if (!Number.isInteger(i)) return undefined;
      cur = cur[i < 0 ? cur.length + i : i];
    } else if (typeof cur === 'object' && cur !== null && typeof seg === 'string') {
      if (!Object.hasOwn(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
};

/**
 * Text for a JSON value read by a path: strings as they are, other scalars plainly (`3`,
 * `true`, `null`), arrays and objects as compact JSON. The peer prints Go `%v` (`[1 2]`,
 * `map[a:1]`) for the last two, which no consumer can parse; we print JSON instead.
 */
export const jsonValueText = (value: unknown): string =>
  typeof value === 'string' ? value : JSON.stringify(value);
