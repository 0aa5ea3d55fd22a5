import type { CommandRunner } from '@trellis/engine';

/** A CommandRunner answering from a function of the command text; records every command. */
export class ScriptedCommandRunner implements CommandRunner {
  readonly commands: string[] = [];
  constructor(
    private readonly answer: (command: string) => { exitCode: number; stdout: string } = () => ({
      exitCode: 0,
      stdout: '',
    }),
  ) {}

  run(command: string): Promise<{ exitCode: number; stdout: string }> {
    this.commands.push(command);
    return Promise.resolve(this.answer(command));
  }
}
