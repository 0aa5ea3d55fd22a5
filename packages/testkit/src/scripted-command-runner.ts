import type { CommandRunner } from '@trellis/engine';

/**
 * A CommandRunner answering from a function of the command text; records every command and the
 * environment it was given.
 */
export class ScriptedCommandRunner implements CommandRunner {
  readonly commands: string[] = [];
  readonly envs: Readonly<Record<string, string>>[] = [];
  constructor(
    private readonly answer: (command: string) => { exitCode: number; stdout: string } = () => ({
      exitCode: 0,
      stdout: '',
    }),
  ) {}

  run(
    command: string,
    opts?: Parameters<CommandRunner['run']>[1],
  ): Promise<{ exitCode: number; stdout: string }> {
    this.commands.push(command);
    this.envs.push(opts?.env ?? {});
    return Promise.resolve(this.answer(command));
  }
}
