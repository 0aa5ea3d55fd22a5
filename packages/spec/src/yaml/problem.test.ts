import { describe, expect, it } from 'vitest';
import { formatPath, formatProblem } from './problem.js';

describe('formatPath', () => {
  it('joins keys with dots and puts list indexes in brackets', () => {
    expect(formatPath(['steps', 2, 'retryPolicy', 'backoff'])).toBe('steps[2].retryPolicy.backoff');
  });

  it('is empty for the document root', () => {
    expect(formatPath([])).toBe('');
  });

  it('writes consecutive indexes of nested lists one after the other', () => {
    expect(formatPath(['steps', 1, 0, 'name'])).toBe('steps[1][0].name');
  });

  it('keeps identifier-like keys with "-" and "$" as plain segments', () => {
    expect(formatPath(['params', 0, 'my-param'])).toBe('params[0].my-param');
    expect(formatPath(['$var'])).toBe('$var');
  });

  it('quotes keys with dots, spaces or a leading digit, also as the first segment', () => {
    expect(formatPath(['registryAuths', 'registry.example.com'])).toBe(
      'registryAuths["registry.example.com"]',
    );
    expect(formatPath(['env', 1, '9LIVES'])).toBe('env[1]["9LIVES"]');
    expect(formatPath(['my key', 'x'])).toBe('["my key"].x');
    expect(formatPath([''])).toBe('[""]');
  });

  it('shortens a key longer than 60 characters, so a message stays short', () => {
    expect(formatPath(['steps', 0, 'k'.repeat(60_000)])).toBe(`steps[0]["${'k'.repeat(57)}..."]`);
    expect(formatPath(['k'.repeat(60)])).toBe('k'.repeat(60));
  });
});

describe('formatProblem', () => {
  it('starts with the line, and the column when known, then the path and the message', () => {
    expect(formatProblem({ path: 'steps[0].comand', message: 'unknown field', line: 6 })).toBe(
      'line 6: steps[0].comand: unknown field',
    );
    expect(formatProblem({ path: '', message: 'YAML syntax error: x', line: 3, column: 7 })).toBe(
      'line 3, column 7: YAML syntax error: x',
    );
  });

  it('leaves out what is not known', () => {
    expect(formatProblem({ path: '', message: 'the file holds no DAG' })).toBe(
      'the file holds no DAG',
    );
    expect(formatProblem({ path: 'name', message: 'bad' })).toBe('name: bad');
  });
});
