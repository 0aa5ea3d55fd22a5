import { describe, expect, it } from 'vitest';
import { matchExpected, matchesOutputPattern } from './condition.js';

describe('matchExpected', () => {
  it('matches a literal that equals a whole line', () => {
    expect(matchExpected('first\nready\nlast', 'ready')).toBe(true);
  });

  it('does not match a literal that is only part of a line', () => {
    expect(matchExpected('not ready yet', 'ready')).toBe(false);
  });

  it('matches a literal against the whole trimmed output', () => {
    expect(matchExpected('  a\nb \n', 'a\nb')).toBe(true);
    expect(matchExpected('  done  \n', 'done')).toBe(true);
  });

  it('matches a line despite CRLF line endings', () => {
    expect(matchExpected('x\r\nyes\r\n', 'yes')).toBe(true);
  });

  it('matches re: anywhere in a line (unanchored)', () => {
    expect(matchExpected('status: 200 OK', 're:20\\d')).toBe(true);
    expect(matchExpected('a\nb', 're:^b$')).toBe(true);
    expect(matchExpected('abc', 're:^b')).toBe(false);
  });

  it('accepts a Go-style (?i) flag group in re:', () => {
    expect(matchExpected('SUCCESS', 're:(?i)success')).toBe(true);
    expect(matchExpected('SUCCESS', 're:success')).toBe(false);
  });

  it('matches empty output against "" and a regex that matches ""', () => {
    expect(matchExpected('', '')).toBe(true);
    expect(matchExpected('', 're:^$')).toBe(true);
    expect(matchExpected('', 're:x*')).toBe(true);
    expect(matchExpected('', 'x')).toBe(false);
    expect(matchExpected('', 're:x')).toBe(false);
  });

  it('does not see an empty line after a trailing newline', () => {
    expect(matchExpected('a\n', 're:^$')).toBe(false);
  });

  it('matches blank output against "" once trimmed', () => {
    expect(matchExpected('  \n', '')).toBe(true);
  });

  it('does not match an invalid regex, and does not throw', () => {
    expect(matchExpected('(', 're:(')).toBe(false);
  });

  it('gives the same answer when asked twice (no regex state)', () => {
    expect(matchExpected('ok', 're:ok')).toBe(true);
    expect(matchExpected('ok', 're:ok')).toBe(true);
  });
});

describe('matchesOutputPattern', () => {
  it('matches a literal substring of a line', () => {
    expect(matchesOutputPattern('line1\nwarning: disk almost full\n', 'disk almost')).toBe(true);
    expect(matchesOutputPattern('all good', 'error')).toBe(false);
  });

  it('matches re: on a line', () => {
    expect(matchesOutputPattern('x\nexit code 42\n', 're:code \\d+$')).toBe(true);
    expect(matchesOutputPattern('code 42 x', 're:code \\d+$')).toBe(false);
  });

  it('accepts a (?i) flag group', () => {
    expect(matchesOutputPattern('FATAL', 're:(?i)fatal')).toBe(true);
  });

  it('matches a literal with a line break across lines', () => {
    expect(matchesOutputPattern('a\nb\nc', 'b\nc')).toBe(true);
  });

  it('does not match an invalid regex, and does not throw', () => {
    expect(matchesOutputPattern('[', 're:[')).toBe(false);
  });
});
