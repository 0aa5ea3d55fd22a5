/**
 * A problem in user content (a DAG file): data, never an exception (docs/architecture.md, "House style").
 * `path` is the location inside the document (`steps[2].retryPolicy.backoff`); `line` and
 * `column` are 1-based positions in the source text when known.
 */
export interface Problem {
  readonly message: string;
  readonly path: string;
  readonly line?: number;
  readonly column?: number;
}

/** One problem as a single line: `line 12: steps[2].retryPolicy.backoff: must be ...`. */
export const formatProblem = (p: Problem): string => {
  const where =
    p.line === undefined
      ? ''
      : p.column === undefined
        ? `line ${p.line}: `
        : `line ${p.line}, column ${p.column}: `;
  return `${where}${p.path ? `${p.path}: ` : ''}${p.message}`;
};

/** A path inside a YAML document: keys and sequence indexes from the root. */
export type YamlPath = readonly (string | number)[];

/** Keys longer than this are shortened in paths, so one long key cannot make a huge message. */
const MAX_SEGMENT_LENGTH = 60;

/**
 * `['steps', 2, 'retryPolicy']` -> `steps[2].retryPolicy`. A key longer than 60 characters is
 * quoted and shortened: `["aaaa..."]`.
 */
export const formatPath = (path: YamlPath): string =>
  path
    .map((seg, i) =>
      typeof seg === 'number'
        ? `[${seg}]`
        : seg.length > MAX_SEGMENT_LENGTH
          ? `[${JSON.stringify(`${seg.slice(0, MAX_SEGMENT_LENGTH - 3)}...`)}]`
          : /^[A-Za-z_$][\w$-]*$/.test(seg)
            ? i === 0
              ? seg
              : `.${seg}`
            : `[${JSON.stringify(seg)}]`,
    )
    .join('');

/** Key under which a path's source position is stored. */
export const pathKey = (path: YamlPath): string => path.map(String).join('\u0000');
