import { parseArgs } from 'node:util';

/** One flag of a command: what node:util parseArgs takes, plus what `--help` says about it. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** For a string flag: what its value is, as `--help` shows it (`<id>`). */
  readonly value?: string;
  /** One line: what the flag does, its default. */
  readonly description: string;
  /** A whole command line using it. */
  readonly example: string;
}

/** The flags of a command, by long name. */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** Flags every store-using command accepts. */
export const STORE_OPTIONS = {
  home: {
    type: 'string',
    value: '<dir>',
    description: 'the Trellis home folder (default $SVC_HOME, else ~/.trellis)',
    example: 'trellis status hello --home /srv/trellis',
  },
  config: {
    type: 'string',
    value: '<file>',
    description: 'the config file (default $SVC_HOME/config.yaml)',
    example: 'trellis start hello --config ./config.yaml',
  },
  dags: {
    type: 'string',
    value: '<dir>',
    description: 'the DAGs folder (default $SVC_HOME/dags)',
    example: 'trellis start hello --dags ./dags',
  },
  help: {
    type: 'boolean',
    short: 'h',
    description: "print the command's usage, flags and examples",
    example: 'trellis start --help',
  },
} as const satisfies FlagSpecs;

/** Parsed flag values, typed by their specs. */
export type FlagValues<O> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } | undefined ? boolean : string;
};

/** A command's parsed arguments; `rest` holds the words after `--` (DAG params). */
export interface CommandArgs<O> {
  readonly values: FlagValues<O & typeof STORE_OPTIONS>;
  readonly positionals: string[];
  readonly rest: string[];
}

/**
 * Parses a command's arguments strictly: an unknown flag throws node's ERR_PARSE_ARGS_* error,
 * which `runCli` turns into one line and the command's usage.
 */
export const parseCommandArgs = <O extends FlagSpecs>(
  args: readonly string[],
  options: O,
): CommandArgs<O> => {
  const dashdash = args.indexOf('--');
  const own = dashdash === -1 ? [...args] : args.slice(0, dashdash);
  const rest = dashdash === -1 ? [] : args.slice(dashdash + 1);
  const all: FlagSpecs = { ...STORE_OPTIONS, ...options };
  const parsed = parseArgs({
    args: own,
    options: Object.fromEntries(
      Object.entries(all).map(([k, f]) => [
        k,
        f.short ? { type: f.type, short: f.short } : { type: f.type },
      ]),
    ),
    allowPositionals: true,
    strict: true,
  });
  return {
    values: parsed.values as CommandArgs<O>['values'],
    positionals: parsed.positionals,
    rest,
  };
};
