import { describe, expect, it } from 'vitest';
import { locateProblems, problemLines } from './spec-errors';

describe('locateProblems', () => {
  it('takes the line number off problems that have one', () => {
    const p = locateProblems([
      'line 4: steps[0].command: unclosed quote',
      'the file holds no DAG: write at least steps:',
      'line 12:3: bad indentation',
      'line 5, column 1: YAML syntax error: deficient indentation',
    ]);
    expect(p).toEqual([
      { line: 4, message: 'steps[0].command: unclosed quote' },
      { line: undefined, message: 'the file holds no DAG: write at least steps:' },
      { line: 12, message: 'bad indentation' },
      { line: 5, message: 'YAML syntax error: deficient indentation' },
    ]);
    expect([...problemLines(p)]).toEqual([4, 12, 5]);
  });
});
