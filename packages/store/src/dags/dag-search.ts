import { RE2JS, RE2JSException } from 're2js';
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
 * The line test of a search query (docs/decisions.md): `/pattern/` is a regular expression in RE2
 * syntax, matched in time linear in the line (re2js), so no pattern can stall the server; anything
 * else is a substring; both ignore case. Errors: bad_request for an empty query or a pattern RE2
 * refuses (invalid, or backtracking-only syntax such as backreferences and lookarounds).
 */
export const compileSearchQuery = (q: string): SearchTest => {
  if (q === '') throw badRequest('q is required: give the text to search for, or /regex/');
  const regex = /^\/(.+)\/$/s.exec(q)?.[1];
  if (regex !== undefined) {
    let re: RE2JS;
    try {
      re = RE2JS.compile(regex, RE2JS.CASE_INSENSITIVE);
    } catch (e) {
      if (!(e instanceof RE2JSException)) throw e;
      throw badRequest(
        `q ${JSON.stringify(q)} is not a regular expression this search runs: ${e.message}; the syntax is RE2 (no backreferences or lookarounds), and to search for the text itself leave out one of the slashes`,
      );
    }
    return (line) => re.test(line);
  }
  const needle = q.toLowerCase();
  return Object.assign((line: string) => line.toLowerCase().includes(needle), { needle });
};

/** A line test; a plain-text query also gives its lower-cased text (a whole-file prefilter). */
export type SearchTest = ((line: string) => boolean) & { readonly needle?: string };

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
