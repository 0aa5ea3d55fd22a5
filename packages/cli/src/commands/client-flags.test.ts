import { describe, expect, it } from 'vitest';
import { dagAndChoiceOf } from './client-flags.js';

const io = () => {
  const err: string[] = [];
  return { err, io: { env: { SVC_API_TOKEN: 'from-env' }, err: (l: string) => err.push(l) } };
};

describe('dagAndChoiceOf', () => {
  it('gives the one DAG named and the checked flags, the token from the environment', () => {
    const { err, io: cliIo } = io();
    const got = dagAndChoiceOf(
      'start',
      'trellis start <dag>',
      ['etl'],
      { server: 'http://h' },
      cliIo,
    );
    expect(got).toEqual({
      dag: 'etl',
      choice: expect.objectContaining({ server: 'http://h', token: 'from-env', wait: false }),
    });
    expect(err).toEqual([]);
  });

  it('prints the missing-DAG message and the usage when no DAG or two are named', () => {
    for (const positionals of [[], ['a', 'b']]) {
      const { err, io: cliIo } = io();
      expect(dagAndChoiceOf('status', 'U', positionals, {}, cliIo, 'name one DAG')).toBeUndefined();
      expect(err).toEqual(['trellis status: name one DAG\nusage: U']);
    }
  });

  it("prints a flag's own error first, naming the value and the fix", () => {
    const { err, io: cliIo } = io();
    const got = dagAndChoiceOf('enqueue', 'U', ['etl'], { 'wait-timeout': 'soon' }, cliIo);
    expect(got).toBeUndefined();
    expect(err[0]).toMatch(/^trellis enqueue: --wait-timeout "soon" is not a number of seconds/);
  });
});
