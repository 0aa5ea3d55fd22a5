/**
 * Compiles a user-written regular expression (`re:` patterns, `logPattern`). Besides JavaScript
 * syntax it accepts a leading Go/RE2-style flag group such as `(?i)` or `(?is)`, which DAGs
 * written for the peer product use: `i`, `m` and `s` become the JavaScript flags of that name.
 * Throws a SyntaxError for an invalid pattern.
 */
export const compilePattern = (source: string): RegExp => {
  const m = /^\(\?([ims]+)\)/.exec(source);
  if (!m) return new RegExp(source);
  const flags = [...new Set(m[1])].join('');
  return new RegExp(source.slice(m[0].length), flags);
};
