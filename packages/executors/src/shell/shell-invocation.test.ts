import { describe, expect, it } from 'vitest';
import { planShellInvocation } from './shell-invocation.js';

const oneLine = (cmdWithArgs: string, shell?: string) => ({
  command: cmdWithArgs.split(' ')[0] ?? '',
  args: cmdWithArgs.split(' ').slice(1),
  cmdWithArgs,
  ...(shell !== undefined ? { shell } : {}),
});

describe('shell invocation', () => {
  it.each(['sh', '/bin/sh', 'bash', '/usr/bin/zsh', 'ksh', 'ash', 'dash'])(
    'runs a one-line command with -e through the default shell %s',
    (shell) => {
      expect(planShellInvocation(oneLine('echo hi'), shell)).toEqual({
        invocation: { command: shell, args: ['-e', '-c', 'echo hi'] },
      });
    },
  );

  it('falls back to sh when the default shell is empty', () => {
    expect(planShellInvocation(oneLine('true'), '  ')).toEqual({
      invocation: { command: 'sh', args: ['-e', '-c', 'true'] },
    });
  });

  it('adds no -e for a default shell that is not sh-like, and keeps its arguments', () => {
    expect(planShellInvocation(oneLine('x'), 'fish')).toEqual({
      invocation: { command: 'fish', args: ['-c', 'x'] },
    });
    expect(planShellInvocation(oneLine('x'), 'bash -o pipefail')).toEqual({
      invocation: { command: 'bash', args: ['-o', 'pipefail', '-e', '-c', 'x'] },
    });
  });

  it('uses a shell named by the step as given, with its arguments and without -e', () => {
    expect(planShellInvocation(oneLine('false | true', 'bash -o pipefail'), '/bin/sh')).toEqual({
      invocation: { command: 'bash', args: ['-o', 'pipefail', '-c', 'false | true'] },
    });
  });

  it('runs a script through its shebang interpreter when the step names no shell', () => {
    const script = '#!/usr/bin/env python3 -u\nprint(1)\n';
    expect(planShellInvocation({ args: [], script }, 'sh')).toEqual({
      invocation: { command: '/usr/bin/env', args: ['python3', '-u'], script },
    });
  });

  it('runs a script through the step shell, ignoring its shebang, when the step names one', () => {
    const script = '#!/usr/bin/env python3\nprint(1)\n';
    expect(planShellInvocation({ args: [], script, shell: 'bash -x' }, 'sh')).toEqual({
      invocation: { command: 'bash', args: ['-x'], script },
    });
  });

  it('runs a script without shebang through the default shell, without -e', () => {
    expect(planShellInvocation({ args: [], script: 'false\necho x' }, '/bin/sh')).toEqual({
      invocation: { command: '/bin/sh', args: [], script: 'false\necho x' },
    });
  });

  it('runs a script with command and args as <command> <args...> <file>', () => {
    const step = {
      command: 'python3',
      args: ['-u'],
      cmdWithArgs: 'python3 -u',
      script: 'print(1)',
    };
    expect(planShellInvocation(step, 'sh')).toEqual({
      invocation: { command: 'python3', args: ['-u'], script: 'print(1)' },
    });
  });

  it('reports a shell line with an unclosed quote and a step with nothing to run', () => {
    expect(planShellInvocation(oneLine('x', 'bash "-o'), 'sh')).toEqual({
      problem: 'invalid shell "bash "-o": write a program and its arguments, quotes closed',
    });
    expect(planShellInvocation({ args: [] }, 'sh')).toEqual({
      problem: 'the step has no command or script to run',
    });
  });

  it('expands a leading ~ in the programs it starts directly: shell, interpreter, shebang', () => {
    const home = '/home/ada';
    expect(planShellInvocation(oneLine('x', '~/bin/myshell -l'), 'sh', home)).toEqual({
      invocation: { command: '/home/ada/bin/myshell', args: ['-l', '-c', 'x'] },
    });
    const withCommand = { command: '~/venv/bin/python', args: [], script: 'print(1)' };
    expect(planShellInvocation(withCommand, 'sh', home)).toEqual({
      invocation: { command: '/home/ada/venv/bin/python', args: [], script: 'print(1)' },
    });
    const shebang = '#!~/venv/bin/python -u\nprint(1)\n';
    expect(planShellInvocation({ args: [], script: shebang }, 'sh', home)).toEqual({
      invocation: { command: '/home/ada/venv/bin/python', args: ['-u'], script: shebang },
    });
  });
});
