import type { CliIo, ExitCode } from '../io.js';
import type { FlagSpecs } from './flags.js';

/** A `trellis` subcommand. */
export interface Command {
  /** As typed; two words for `migrate history`. */
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** More text for `--help` after the summary (exit codes, where output goes). */
  readonly details?: string;
  /** The command's own flags (besides --home, --config, --dags and --help), for `--help`. */
  readonly options?: FlagSpecs;
  /** Runs the command with the arguments after its name. */
  readonly run: (args: readonly string[], io: CliIo) => Promise<ExitCode>;
}
