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
