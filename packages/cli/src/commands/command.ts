import type { CliIo, ExitCode } from '../io.js';

/** A `trellis` subcommand. One that is not built yet names the issue that brings it. */
export interface Command {
  /** As typed; two words for `migrate history`. */
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** Runs the command with the arguments after its name. */
  readonly run?: (args: readonly string[], io: CliIo) => Promise<ExitCode>;
  /** For commands not built yet: what brings them. */
  readonly arrivesWith?: string;
}
