import { describe, expect, it } from 'vitest';
import { AppError } from '@trellis/core';
import { compileSearchQuery, searchText } from './dag-search.js';

const text = [
  'name: etl',
  'steps:',
  '  - name: Extract',
  '    command: extract.sh',
  '  - name: load',
  '    command: load.sh',
  '',
].join('\n');

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return AppError.is(e) ? e.code : 'not an AppError';
  }
};

describe('DAG search', () => {
  it('matches a substring ignoring case, with two lines of context around the line', () => {
    expect(searchText(text, compileSearchQuery('EXTRACT'))).toEqual([
      {
        line: 'name: etl\nsteps:\n  - name: Extract\n    command: extract.sh\n  - name: load',
        lineNumber: 3,
        startLine: 1,
      },
      {
        line: 'steps:\n  - name: Extract\n    command: extract.sh\n  - name: load\n    command: load.sh',
        lineNumber: 4,
        startLine: 2,
      },
    ]);
  });

  it('cuts the context at the start and the end of the file', () => {
    expect(searchText(text, compileSearchQuery('etl'))).toEqual([
      { line: 'name: etl\nsteps:\n  - name: Extract', lineNumber: 1, startLine: 1 },
    ]);
    expect(searchText(text, compileSearchQuery('load.sh'))).toEqual([
      {
        line: '    command: extract.sh\n  - name: load\n    command: load.sh',
        lineNumber: 6,
        startLine: 4,
      },
    ]);
  });

  it('reads /pattern/ as a regular expression ignoring case', () => {
    expect(
      searchText(text, compileSearchQuery('/^\\s+command: [a-z]+\\.SH$/')).map((m) => m.lineNumber),
    ).toEqual([4, 6]);
    // Without both slashes it is text.
    expect(searchText('a /x/ b\n', compileSearchQuery('/x/ '))).toEqual([
      { line: 'a /x/ b', lineNumber: 1, startLine: 1 },
    ]);
  });

  it('handles CRLF line ends', () => {
    expect(searchText('a\r\nneedle\r\nb', compileSearchQuery('needle'))).toEqual([
      { line: 'a\nneedle\nb', lineNumber: 2, startLine: 1 },
    ]);
  });

  it('refuses an empty query and an invalid regular expression with bad_request', () => {
    expect(codeOf(() => compileSearchQuery(''))).toBe('bad_request');
    expect(codeOf(() => compileSearchQuery('/(unclosed/'))).toBe('bad_request');
    expect(() => compileSearchQuery('/(unclosed/')).toThrow(/not a regular expression/);
  });

  it('refuses backtracking-only syntax, naming RE2, with bad_request', () => {
    for (const q of ['/(a)\\1/', '/a(?=b)/', '/(?<!a)b/']) {
      expect(
        codeOf(() => compileSearchQuery(q)),
        q,
      ).toBe('bad_request');
      expect(() => compileSearchQuery(q)).toThrow(/RE2 \(no backreferences or lookarounds\)/);
    }
  });

  it('runs a pattern that backtracks exponentially in JavaScript in linear time', () => {
    // /(a+)+$/ over 5,000 "a"s and a "!" takes 2^5000 steps in a backtracking engine.
    const line = `${'a'.repeat(5_000)}!`;
    expect(searchText(line, compileSearchQuery('/(a+)+$/'))).toEqual([]);
    expect(searchText(line, compileSearchQuery('/(A+)+!$/'))).toEqual([
      { line, lineNumber: 1, startLine: 1 },
    ]);
  });
});
