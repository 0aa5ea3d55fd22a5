import { badRequest } from '@trellis/core';

/** One match of the DAG search (spec: Search result). */
export interface SearchMatch {
  /** The matching line with up to {@link SEARCH_CONTEXT_LINES} lines before and after, `\n`-joined. */
  readonly line: string;
  /** 1-based number of the matching line. */
  readonly lineNumber: number;
  /** 1-based number of the first line of `line`. */
  readonly startLine: number;
}

/** Lines of context shown before and after a matching line (as the peer does: two). */
export const SEARCH_CONTEXT_LINES = 2;

/**
 * The line test of a search query (docs/decisions.md): `/pattern/` is a JavaScript regular
 * expression, anything else a substring; both ignore case. Errors: bad_request for an empty query
 * or an invalid regular expression.
 */
export const compileSearchQuery = (q: string): ((line: string) => boolean) => {
  if (q === '') throw badRequest('q is required: give the text to search for, or /regex/');
  const regex = /^\/(.+)\/$/s.exec(q)?.[1];
  if (regex !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(regex, 'i');
    } catch (e) {
      throw badRequest(
        `q ${JSON.stringify(q)} is not a valid regular expression: ${(e as Error).message}; to search for the text itself, leave out one of the slashes`,
      );
    }
    return (line) => re.test(line);
  }
  const needle = q.toLowerCase();
  return (line) => line.toLowerCase().includes(needle);
};

/** The matches of `test` in `text`, one per matching line, in order. */
export const searchText = (text: string, test: (line: string) => boolean): SearchMatch[] => {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines.at(-1) === '') lines.pop(); // the final newline ends a line
  const out: SearchMatch[] = [];
  lines.forEach((l, i) => {
    if (!test(l)) return;
    const start = Math.max(0, i - SEARCH_CONTEXT_LINES);
    const end = Math.min(lines.length, i + SEARCH_CONTEXT_LINES + 1);
    out.push({ line: lines.slice(start, end).join('\n'), lineNumber: i + 1, startLine: start + 1 });
  });
  return out;
};
