import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import { parseCommandArgs, withRuntime } from './common.js';
import type { FlagSpecs } from './flags.js';

const USAGE = 'trellis cleanup --older-than <days>';

const OPTIONS = {
  'older-than': {
    type: 'string',
    value: '<days>',
    description: 'delete the runs that ended more than this many days ago',
    example: 'trellis cleanup --older-than 30',
  },
} as const satisfies FlagSpecs;

/** `trellis cleanup`: deletes run history (records, child runs, logs) older than N days. */
const run = async (args: readonly string[], io: CliIo): Promise<ExitCode> => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS);
  const text = values['older-than'];
  const days = text === undefined || !/^\d+$/.test(text.trim()) ? NaN : Number(text);
  if (positionals.length > 0 || Number.isNaN(days)) {
    io.err(
      text === undefined || positionals.length > 0
        ? `trellis cleanup: say how much history to keep with --older-than <days>, e.g. --older-than 30\nusage: ${USAGE}`
        : `trellis cleanup: --older-than must be a whole number of days of 0 or more, got ${JSON.stringify(text)}; e.g. --older-than 30`,
    );
    return ExitCode.Usage;
  }
  return withRuntime('cleanup', io, values, async (rt) => {
    const report = await rt.store.cleanupAll(days);
    const perDag = Object.entries(report.deletedRuns)
      .map(([dag, n]) => `${dag}: ${n}`)
      .join(', ');
    io.out(
      `deleted ${report.totalRuns} run(s) that ended more than ${days} day(s) ago, with their child runs and logs${perDag ? ` (${perDag})` : ''}`,
    );
    if (report.orphanedLogFolders > 0)
      io.out(`removed ${report.orphanedLogFolders} log folder(s) whose run no longer exists`);
    return ExitCode.Ok;
  });
};

export const cleanupCommand: Command = {
  name: 'cleanup',
  summary: 'delete run history older than a number of days',
  usage: USAGE,
  options: OPTIONS,
  run,
};
