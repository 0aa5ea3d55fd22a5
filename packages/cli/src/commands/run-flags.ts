import type { FlagSpecs } from './flags.js';

/** `--run-id`, for the commands that name an existing run. */
export const RUN_ID_OPTION = {
  'run-id': {
    type: 'string',
    short: 'r',
    value: '<id>',
    description: 'the run (default: the latest run of the DAG)',
    example: 'trellis status etl --run-id 0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
  },
} as const satisfies FlagSpecs;

/** Flags of the commands that create a run: its id and its params. */
export const NEW_RUN_OPTIONS = {
  'run-id': {
    type: 'string',
    short: 'r',
    value: '<id>',
    description: "the new run's id: letters, digits, - and _ (default: a generated UUIDv7)",
    example: 'trellis start etl --run-id build-1234',
  },
  params: {
    type: 'string',
    short: 'p',
    value: '"<params>"',
    description:
      'params: NAME=value and positional words, or a JSON object; words after -- are added and win',
    example: 'trellis start etl -p "DATE=2024-01-31 full" -- REGION=eu',
  },
} as const satisfies FlagSpecs;
