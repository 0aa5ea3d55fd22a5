import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, type loadConfig } from '@trellis/core';
import { ExitCode, type CliIo } from '../io.js';
import type { Command } from './command.js';
import type { parseDagFile } from '@trellis/spec';

type ParseDagFile = typeof parseDagFile;
import { parseCommandArgs } from './flags.js';

const USAGE = 'trellis validate [--dags <dir>] [--home <dir>] [--config <file>] <file|name>...';

/** Finds a DAG file: a path as given, or a name in the DAGs folder (`.yaml`/`.yml` optional). */
export const resolveDagFile = (arg: string, cwd: string, dagsDir: string): string | undefined => {
  const candidates = [
    resolve(cwd, arg),
    join(dagsDir, arg),
    join(dagsDir, `${arg}.yaml`),
    join(dagsDir, `${arg}.yml`),
  ];
  return candidates.find((p) => existsSync(p) && statSync(p).isFile());
};

const isDirectory = (path: string): boolean => existsSync(path) && statSync(path).isDirectory();

/** Whether a `run:` target exists next to the file or in the DAGs folder. */
const dagExistsFor =
  (file: string, dagsDir: string) =>
  (target: string): boolean =>
    [dirname(file), dagsDir].some((dir) =>
      [join(dir, target), join(dir, `${target}.yaml`), join(dir, `${target}.yml`)].some((p) =>
        existsSync(p),
      ),
    );

/**
 * `trellis validate <file...>`: one line per valid file; every problem of an invalid file on its
 * own line, prefixed by the file. Exit 0 when all are valid, 1 otherwise, 2 on usage errors.
 */
const validate = (
  args: readonly string[],
  io: CliIo,
  parse: ParseDagFile,
  load: typeof loadConfig,
): ExitCode => {
  const { values, positionals } = parseCommandArgs(args, {});
  if (positionals.length === 0) {
    io.err(`trellis validate: name at least one DAG file\nusage: ${USAGE}`);
    return ExitCode.Usage;
  }
  let dagsDir: string;
  try {
    dagsDir = load({
      env: io.env,
      argv: { dags: values.dags, home: values.home, config: values.config },
      cwd: io.cwd,
    }).config.paths.dagsDir;
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`trellis validate: ${e.message}`);
      return ExitCode.Usage;
    }
    throw e;
  }

  let allValid = true;
  for (const arg of positionals) {
    const file = resolveDagFile(arg, io.cwd, dagsDir);
    if (!file) {
      allValid = false;
      io.out(
        isDirectory(resolve(io.cwd, arg))
          ? `${arg}: is a directory, not a DAG file`
          : `${arg}: no such file, and no DAG of that name in ${dagsDir}`,
      );
      continue;
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      allValid = false;
      io.out(`${arg}: cannot read the file: ${(e as Error).message}`);
      continue;
    }
    const result = parse(text, {
      location: file,
      dagExists: dagExistsFor(file, dagsDir),
      cwd: io.cwd,
    });
    if (result.valid) {
      const names = [result.main.dag.name, ...result.localDags.map((d) => d.dag.name)];
      io.out(
        `${arg}: valid (${names.length === 1 ? 'DAG' : 'DAGs'} ${names.map((n) => JSON.stringify(n)).join(', ')})`,
      );
    } else {
      allValid = false;
      for (const e of result.errors) io.out(`${arg}: ${e}`);
    }
  }
  return allValid ? ExitCode.Ok : ExitCode.Failure;
};

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check DAG files and list every problem with its line',
  usage: USAGE,
  // The parser is imported here, not at the top: `trellis --help` must not load it.
  // the DAG parser and the config schema (zod) load when the command runs, not with --help
  run: async (args, io) => {
    const [spec, core] = await Promise.all([
      import('@trellis/spec'),
      import('../wiring/config-loader.js'),
    ]);
    return validate(args, io, spec.parseDagFile, core.loadConfig);
  },
};
