import { describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';
import { COMMANDS } from './registry.js';
import { oneOf, twoWordCommandsFor } from './command-hint.js';

describe('twoWordCommandsFor', () => {
  it('names the two-word commands a first word begins', () => {
    expect(twoWordCommandsFor('migrate', COMMANDS)).toEqual(['migrate history', 'migrate store']);
    expect(twoWordCommandsFor('db', COMMANDS)).toEqual(['db migrate', 'db status']);
  });

  it('names nothing for a word that begins no two-word command', () => {
    expect(twoWordCommandsFor('frobnicate', COMMANDS)).toEqual([]);
    expect(twoWordCommandsFor('history', COMMANDS)).toEqual([]);
  });

  it('lists one, two or more names as a reader would', () => {
    expect(oneOf(['a'])).toBe('"a"');
    expect(oneOf(['a', 'b'])).toBe('"a" or "b"');
    expect(oneOf(['a', 'b', 'c'])).toBe('"a", "b" or "c"');
  });
});

describe('trellis migrate', () => {
  it('asks whether "migrate history" or "migrate store" was meant and exits 2', async () => {
    const err: string[] = [];
    const code = await runCli(['migrate'], {
      out: () => undefined,
      err: (l) => err.push(l),
      env: {},
      cwd: '/',
    });
    expect(code).toBe(2);
    expect(err).toEqual([
      'trellis: unknown command "migrate"; did you mean "migrate history" or "migrate store"?',
    ]);
  });
});
