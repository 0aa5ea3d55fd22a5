import type { Condition, ConditionResult } from '@trellis/spec';
import { matchExpected } from '../vars/condition.js';

/** How a condition's text is evaluated and how a command is run, bound to one scope. */
export interface ConditionEnv {
  /** Variables and backticks expanded (used when `expected` is set). */
  readonly expandFull: (text: string) => Promise<string>;
  /**
   * Expands variables only (values reach the shell as values, never as syntax) and runs the
   * command with the shell; exit code 0 = met.
   */
  readonly runCommand: (command: string) => Promise<{ exitCode: number; stdout: string }>;
}

/**
 * Evaluates preconditions (as the peer does): with `expected`, the fully expanded condition is
 * compared with it (literal = a whole line; `re:` = regex on any line); without, the condition
 * runs as a shell command and exit 0 means met. Every condition is evaluated; each unmet one
 * gets its message (its own `error` text when the definition gives one).
 */
export const evaluateConditions = async (
  conditions: readonly Condition[],
  env: ConditionEnv,
): Promise<{ met: boolean; results: ConditionResult[] }> => {
  const results: ConditionResult[] = [];
  for (const c of conditions) {
    let failure = '';
    try {
      if (c.expected !== undefined) {
        const got = (await env.expandFull(c.condition)).trim();
        if (!matchExpected(got, c.expected))
          failure = `condition was not met: expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(got)}`;
      } else {
        const r = await env.runCommand(c.condition);
        if (r.exitCode !== 0) failure = `condition was not met: exit status ${r.exitCode}`;
      }
    } catch (e) {
      failure = `condition could not be evaluated: ${(e as Error).message}`;
    }
    results.push({
      condition: c.condition,
      expected: c.expected ?? '',
      error: failure === '' ? '' : (c.error ?? failure),
    });
  }
  return { met: results.every((r) => r.error === ''), results };
};
