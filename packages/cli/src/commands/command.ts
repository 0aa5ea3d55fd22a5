import type { CliIo, ExitCode } from '../io.js';

/** A `trellis` subcommand. */
export interface Command {
  /** As typed; two words for `migrate history`. */
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** Runs the command with the arguments after its name. */
  readonly run: (args: readonly string[], io: CliIo) => Promise<ExitCode>;
}
