import type { CliIo } from '../io.js';
import type { FlagSpecs, FlagValues } from './flags.js';

/** Flags of the commands that can target a running server instead of the local store. */
export const SERVER_OPTIONS = {
  server: {
    type: 'string',
    value: '<url>',
    description:
      'send the request to this Trellis server (http://host:port[/basePath]) instead of using the local store',
    example: 'trellis start etl --server http://trellis.internal:8080',
  },
  token: {
    type: 'string',
    value: '<token>',
    description: 'the Bearer token for --server (default $SVC_API_TOKEN)',
    example: 'trellis start etl --server http://127.0.0.1:8080 --token "$CI_TRELLIS_TOKEN"',
  },
  json: {
    type: 'boolean',
    description:
      "print the run's details as the API returns them (with statusLabel) on stdout, and nothing else there",
    example: 'trellis status etl --json',
  },
} as const satisfies FlagSpecs;

/** Flags of the commands that start a run and may wait for its end. */
export const WAIT_OPTIONS = {
  wait: {
    type: 'boolean',
    short: 'w',
    description:
      'wait until the run is final; the exit code tells its result (0 finished, 1 failed, 3 cancelled, 4 wait timeout)',
    example: 'trellis enqueue etl --server http://127.0.0.1:8080 --wait',
  },
  'wait-timeout': {
    type: 'string',
    value: '<seconds>',
    description:
      'stop waiting after this many seconds and exit 4 (default: no limit; implies --wait)',
    example: 'trellis start etl --server http://127.0.0.1:8080 --wait-timeout 600',
  },
  follow: {
    type: 'boolean',
    short: 'f',
    description:
      "print the steps' stdout and stderr as they are written, each line prefixed by the step name (implies --wait)",
    example: 'trellis start etl --server http://127.0.0.1:8080 --follow',
  },
} as const satisfies FlagSpecs;

/** What the server and wait flags asked for, checked. */
export interface ClientChoice {
  readonly server?: string | undefined;
  readonly token?: string | undefined;
  readonly json: boolean;
  readonly wait: boolean;
  readonly follow: boolean;
  readonly timeoutMs?: number | undefined;
}

/** Reads the server and wait flags; a string is a usage error naming the value and the fix. */
export const clientChoiceOf = (
  values: FlagValues<typeof SERVER_OPTIONS & Partial<typeof WAIT_OPTIONS>>,
  env: Readonly<Record<string, string | undefined>>,
): ClientChoice | string => {
  const raw = values['wait-timeout'];
  const seconds = raw === undefined ? undefined : Number(raw);
  if (raw !== undefined && (raw.trim() === '' || !Number.isFinite(seconds) || (seconds ?? -1) < 0))
    return `--wait-timeout ${JSON.stringify(raw)} is not a number of seconds; write e.g. --wait-timeout 600`;
  if (values.token !== undefined && values.server === undefined)
    return '--token goes with --server (a local run needs no token); add --server <url> or drop --token';
  const token = values.token ?? (values.server !== undefined ? env.SVC_API_TOKEN : undefined);
  return {
    server: values.server,
    token: token === '' ? undefined : token,
    json: values.json === true,
    follow: values.follow === true,
    wait: values.wait === true || values.follow === true || raw !== undefined,
    timeoutMs: seconds === undefined ? undefined : seconds * 1000,
  };
};

/** The usage error of a command that runs a DAG named by its name or its file. */
export const NAME_ONE_DAG_OR_FILE = 'name one DAG (a name in the DAGs folder or a file)';

/**
 * The one DAG a run command names and its checked client flags; undefined once a usage error
 * (no DAG, two DAGs, or a bad server or wait flag) was printed with the command's usage.
 */
export const dagAndChoiceOf = (
  command: string,
  usage: string,
  positionals: readonly string[],
  values: FlagValues<typeof SERVER_OPTIONS & Partial<typeof WAIT_OPTIONS>>,
  io: Pick<CliIo, 'env' | 'err'>,
  missing = 'name one DAG',
): { readonly dag: string; readonly choice: ClientChoice } | undefined => {
  const dag = positionals[0];
  const choice = clientChoiceOf(values, io.env);
  if (dag && positionals.length === 1 && typeof choice !== 'string') return { dag, choice };
  io.err(`trellis ${command}: ${typeof choice === 'string' ? choice : missing}\nusage: ${usage}`);
  return undefined;
};
