import { describe, expect, it } from 'vitest';
import { parseDagFile } from '../load-dag-file.js';

describe('DAG name problems', () => {
  const text = '# comment\n\nsteps:\n  - echo hi\n';

  it('give no line when the name comes from the file name', () => {
    const r = parseDagFile(text, { location: '/dags/bad name.yaml' });
    expect(r.main.problems).toEqual([
      {
        path: '',
        message:
          'invalid DAG name "bad name": use letters, digits, "_", "." or "-" (max 40); it comes from the file name, so rename the file or add name: <name>',
      },
    ]);
  });

  it('give no line when the name is given by the caller', () => {
    const r = parseDagFile(text, { name: 'a/b' });
    expect(r.errors).toEqual([
      'invalid DAG name "a/b": use letters, digits, "_", "." or "-" (max 40)',
    ]);
  });

  it('give the line of name: when the file names the DAG', () => {
    const r = parseDagFile(`name: a b\n${text}`, { location: '/dags/ok.yaml' });
    expect(r.errors).toEqual([
      'line 1: name: invalid DAG name "a b": use letters, digits, "_", "." or "-" (max 40)',
    ]);
  });
});

describe('DAG-level ssh and container', () => {
  it('do not conflict when both are written empty', () => {
    const r = parseDagFile('ssh: null\ncontainer: null\nsteps:\n  - echo hi\n', { name: 'x' });
    expect(r.errors).toEqual([]);
  });
});

describe('handlers', () => {
  it('are named onSuccess, onFailure, ... whatever name they write', () => {
    const r = parseDagFile(
      'steps: [echo]\nhandlerOn:\n  failure:\n    name: page\n    command: x\n',
      {
        name: 'x',
      },
    );
    expect(r.errors).toEqual([]);
    expect(r.main.dag.handlerOn.failure?.name).toBe('onFailure');
  });
});

// docs/decisions.md, "A DAG with no steps": accepted, as the peer does (shared defaults files).
describe('a DAG with no steps', () => {
  it.each([
    ['no steps key', 'name: defaults\nenv:\n  - A: 1\n'],
    ['steps: with nothing', 'steps:\n'],
    ['an empty list', 'steps: []\n'],
    ['an empty mapping', 'steps: {}\n'],
  ])('is valid with %s, and has no steps', (_label, text) => {
    const r = parseDagFile(text, { name: 'x' });
    expect(r.errors).toEqual([]);
    expect(r.valid).toBe(true);
    expect(r.main.dag.steps).toEqual([]);
  });

  it('may still have handlers', () => {
    const r = parseDagFile('handlerOn:\n  exit:\n    command: echo bye\n', { name: 'x' });
    expect(r.errors).toEqual([]);
    expect(r.main.dag.handlerOn.exit?.name).toBe('onExit');
  });

  it('still refuses an empty parallel group', () => {
    const r = parseDagFile('steps:\n  - []\n', { name: 'x' });
    expect(r.errors).toEqual([
      'line 2: steps[0]: empty parallel group: list at least one step in it',
    ]);
  });
});

// docs/decisions.md, "Handler keys in any case".
describe('handlerOn keys', () => {
  it('are accepted in any case and stored under the spec spelling', () => {
    const r = parseDagFile(
      'steps: [echo]\nhandlerOn:\n  Success: {command: a}\n  FAILURE: {command: b}\n  Cancel: {command: c}\n  Exit: {command: d}\n',
      { name: 'x' },
    );
    expect(r.errors).toEqual([]);
    const h = r.main.dag.handlerOn;
    expect([h.success?.command, h.failure?.command, h.cancel?.command, h.exit?.command]).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(h.exit?.name).toBe('onExit');
  });

  it('refuses the same handler written twice in different cases, naming both', () => {
    const r = parseDagFile(
      'steps: [echo]\nhandlerOn:\n  exit: {command: a}\n  Exit: {command: b}\n',
      { name: 'x' },
    );
    expect(r.errors).toEqual([
      'line 4: handlerOn.Exit: "Exit" and "exit" are the same handler: keep one of them',
    ]);
  });

  it('names the meant key for a misspelt one', () => {
    const r = parseDagFile('steps: [echo]\nhandlerOn:\n  onExit: {command: a}\n', { name: 'x' });
    expect(r.errors).toEqual([
      'line 3: handlerOn.onExit: unknown field "onExit" in handlerOn: did you mean "exit"?',
    ]);
  });
});
