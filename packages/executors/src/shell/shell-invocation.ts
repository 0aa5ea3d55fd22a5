import { basename } from 'node:path';
import { expandHome, homeOf } from '@trellis/core';
import { splitCommandLine, type Step } from '@trellis/spec';

/** What to start for a shell step. With `script`, the script file's path is appended to `args`. */
export interface ShellInvocation {
  readonly command: string;
  readonly args: readonly string[];
  /** Text to write to a temporary script file whose path becomes the last argument. */
  readonly script?: string;
}

/** Shells that accept `-e` (errexit); the default shell gets it for one-line commands. */
const ERREXIT_SHELLS = new Set(['sh', 'bash', 'zsh', 'ksh', 'ash', 'dash']);

/**
 * Decides how a shell step runs (as the peer does):
 * - one-line command: `<default shell> -e -c "<cmdWithArgs>"` for sh-like default shells, or
 *   `<step shell, with its args> -c "<cmdWithArgs>"` when the step names a shell (no `-e`);
 * - script: `<command> <args...> <file>` when the step also has `command`; else
 *   `<interpreter> [args] <file>` for a shebang when the step names no shell; else `<shell> <file>`.
 * A shell line that cannot be split (unclosed quote) or a step with nothing to run is a problem.
 * The programs started directly (shell, script interpreter) may start with `~`, meaning `home`.
 */
export const planShellInvocation = (
  step: Pick<Step, 'command' | 'args' | 'cmdWithArgs' | 'script' | 'shell'>,
  defaultShell: string,
  home: string = homeOf({}),
): { invocation: ShellInvocation } | { problem: string } => {
  const userShell = step.shell?.trim() ? step.shell.trim() : undefined;
  const shellLine = userShell ?? (defaultShell.trim() || 'sh');
  const shell = splitCommandLine(shellLine);
  const [shellProgram, ...shellArgs] = shell ?? [];
  const program = shellProgram === undefined ? undefined : expandHome(shellProgram, home);
  if (program === undefined)
    return {
      problem: `invalid shell "${shellLine}": write a program and its arguments, quotes closed`,
    };

  if (step.script !== undefined) {
    const { script } = step;
    if (step.command !== undefined)
      return {
        invocation: { command: expandHome(step.command, home), args: [...step.args], script },
      };
    const shebang = userShell === undefined ? shebangOf(script) : undefined;
    if (shebang?.[0] !== undefined)
      return {
        invocation: { command: expandHome(shebang[0], home), args: shebang.slice(1), script },
      };
    return { invocation: { command: program, args: shellArgs, script } };
  }

  const line =
    step.cmdWithArgs ??
    (step.command !== undefined ? [step.command, ...step.args].join(' ') : undefined);
  if (line === undefined) return { problem: 'the step has no command or script to run' };
  // spec (peer 4.12): errexit only for the default shell; a shell the user names runs as given.
  const errexit = userShell === undefined && ERREXIT_SHELLS.has(basename(program));
  return {
    invocation: { command: program, args: [...shellArgs, ...(errexit ? ['-e'] : []), '-c', line] },
  };
};

/** `#!/usr/bin/env python3 -u` -> ['/usr/bin/env', 'python3', '-u']; undefined without a shebang. */
const shebangOf = (script: string): string[] | undefined => {
  const text = script.trimStart();
  if (!text.startsWith('#!')) return undefined;
  const end = text.indexOf('\n');
  return text
    .slice(2, end === -1 ? undefined : end)
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
};
