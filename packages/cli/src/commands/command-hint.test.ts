import { describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';
import { COMMANDS } from './registry.js';
import { twoWordCommandFor } from './command-hint.js';

describe('twoWordCommandFor', () => {
  it('names the two-word command a first word begins', () => {
    expect(twoWordCommandFor('migrate', COMMANDS)).toBe('migrate history');
  });

  it('names nothing for a word that begins no two-word command', () => {
    expect(twoWordCommandFor('frobnicate', COMMANDS)).toBeUndefined();
    expect(twoWordCommandFor('history', COMMANDS)).toBeUndefined();
  });
});

describe('trellis migrate', () => {
  it('asks whether "migrate history" was meant and exits 2', async () => {
    const err: string[] = [];
    const code = await runCli(['migrate'], {
      out: () => undefined,
      err: (l) => err.push(l),
      env: {},
      cwd: '/',
    });
    expect(code).toBe(2);
    expect(err).toEqual(['trellis: unknown command "migrate"; did you mean "migrate history"?']);
  });
});
