import { compilePattern } from '@trellis/spec';

/** Prefix that makes an `expected` or `continueOn.output` value a regular expression. */
export const REGEX_PREFIX = 're:';

/**
 * The lines of a command's output. One trailing line break does not start an empty last line,
 * so `"a\n"` is the single line `a` while `""` is the single empty line.
 */
const linesOf = (text: string): string[] => {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
};

/**
 * The `re:` pattern compiled (flags at most `i`, `m`, `s`, so `test` keeps no state). Undefined for an invalid pattern: the normaliser reports those when the DAG is loaded, and a
 * pattern that became invalid through expansion simply does not match.
 */
const compileRegex = (source: string): RegExp | undefined => {
  try {
    return compilePattern(source);
  } catch {
    return undefined;
  }
};

/**
 * Whether a condition's output meets `expected` (spec: Step fields `preconditions`;
 * the peer's behaviour). A literal `expected` must equal a whole line of the output, or the whole
 * output once trimmed; `re:<regex>` must match somewhere in a line (unanchored; a leading `(?i)`
 * flag group is accepted). Empty output is one empty line, so it matches `""` and any regex that
 * matches `""`.
 */
export const matchExpected = (output: string, expected: string): boolean => {
  const lines = linesOf(output);
  if (expected.startsWith(REGEX_PREFIX)) {
    const re = compileRegex(expected.slice(REGEX_PREFIX.length));
    return re !== undefined && lines.some((line) => re.test(line));
  }
  return output.trim() === expected || lines.some((line) => line === expected);
};

/**
 * Whether a step's output contains a `continueOn.output` pattern (spec: Step fields
 * `continueOn`): a literal pattern must occur in some line (substring; a pattern with a line
 * break may span lines), `re:<regex>` must match in some line.
 */
export const matchesOutputPattern = (text: string, pattern: string): boolean => {
  const lines = linesOf(text);
  if (pattern.startsWith(REGEX_PREFIX)) {
    const re = compileRegex(pattern.slice(REGEX_PREFIX.length));
    return re !== undefined && lines.some((line) => re.test(line));
  }
  if (/[\r\n]/.test(pattern)) return text.includes(pattern);
  return lines.some((line) => line.includes(pattern));
};
