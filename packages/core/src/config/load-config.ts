import { readFileSync } from 'node:fs';
import path from 'node:path';
import { YAMLException, loadAll } from 'js-yaml';
import { ConfigError } from './config-error.js';
import { FLAG_MAP, type ConfigFlags } from './config-flags.js';
import { ConfigSchema, type Config } from './config.schema.js';
import { ENV_MAP } from './env-map.js';
import { expandHome, homeOf } from '../paths/home.js';
import { dottedPath, formatIssues } from './format-issues.js';
import {
  parseSetting,
  parseSettingText,
  type RawSetting,
  type SettingKind,
  type SettingValue,
} from './parse-setting.js';

/** Inputs of {@link loadConfig}. Nothing is read from the process itself except the file. */
export interface LoadConfigOptions {
  /** Environment variables, e.g. from `readProcessEnv()`. An empty value counts as unset. */
  env: Readonly<Record<string, string | undefined>>;
  /** CLI flags as the CLI parser produced them. An empty string counts as not given. */
  argv: ConfigFlags;
  /** Config file to read, overriding `--config`, `SVC_CONFIG` and `$home/config.yaml`. */
  file?: string | undefined;
  /**
   * Directory that relative paths from flags and env resolve against.
   * @default `process.cwd()`
   */
  cwd?: string | undefined;
}

/** What {@link loadConfig} returns. */
export interface LoadedConfig {
  /** The complete config, deeply frozen. */
  config: Readonly<Config>;
  /** Things to log at boot that do not stop it (deprecated keys). */
  warnings: string[];
  /** Absolute path of the config file that was read, or `undefined` when there was none. */
  configFile: string | undefined;
}

/** A value from one layer (env or flags) for one config path, with where it came from. */
interface Assignment {
  path: string;
  value: SettingValue;
  /** `SVC_PORT` or `--port`: names the source in error messages. */
  source: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const given = (v: RawSetting | undefined): v is RawSetting => v !== undefined && v !== '';

/** Path-valued fields of the file whose leading `~` is expanded (relative ones stay relative). */
const FILE_PATH_FIELDS = [
  ['paths', 'dagsDir'],
  ['paths', 'dataDir'],
  ['paths', 'logDir'],
  ['defaultShell'],
] as const;

/**
 * Loads Trellis's server config. Layers, lowest first: schema defaults < the config file
 * (`file` option > `--config` > `SVC_CONFIG` > `$home/config.yaml`) < `SVC_*` variables
 * ({@link ENV_MAP}) < CLI flags ({@link FLAG_MAP}). `home` comes from `--home` > `SVC_HOME` >
 * `~/.trellis`; `~` means `env.HOME`, else the OS user's home.
 *
 * A missing `$home/config.yaml` is fine; a missing file named explicitly is not. Relative paths
 * in the file resolve against `home`; those from env and flags against `cwd`.
 *
 * @throws ConfigError naming the file, variable or flag, the config path, the value and a fix.
 */
export const loadConfig = (options: LoadConfigOptions): LoadedConfig => {
  const { env, argv } = options;
  const cwd = options.cwd ?? process.cwd();
  const userHome = homeOf(env);
  const absolute = (p: string): string => path.resolve(cwd, expandHome(p, userHome));

  // home and the file choice come first: the file is found through home.
  const homeFrom = firstGiven([
    ['--home', argv.home],
    ['SVC_HOME', env.SVC_HOME],
  ]);
  const home = homeFrom
    ? absolute(parseSettingText(homeFrom.value, homeFrom.source))
    : path.join(userHome, '.trellis');

  const explicitFile = firstGiven([
    ['the file option of loadConfig', options.file],
    ['--config', argv.config],
    ['SVC_CONFIG', env.SVC_CONFIG],
  ]);
  const configFile = explicitFile
    ? absolute(parseSettingText(explicitFile.value, explicitFile.source))
    : path.join(home, 'config.yaml');
  const text = readConfigFile(configFile, explicitFile?.source);

  const warnings: string[] = [];
  const raw = text === undefined ? {} : parseConfigText(text, configFile, userHome, warnings);

  // Malformed variables and flags are collected, not thrown one by one, so a single boot
  // reports every problem together with the schema's.
  const problems: string[] = [];
  const provenance = new Map<string, string>();
  if (homeFrom) provenance.set('home', homeFrom.source);
  // Env before flags: a later assignment to the same path wins (defaults < file < env < flags).
  const layers = [
    ...envAssignments(env, absolute, problems),
    ...flagAssignments(argv, absolute, problems),
  ];
  for (const a of layers) {
    if (setAt(raw, a.path, a.value)) provenance.set(a.path, a.source);
  }
  raw.home = home;

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success || problems.length > 0) {
    if (parsed.success) throw new ConfigError(problems);
    const fileLabel = text === undefined ? 'default config' : configFile;
    const sourceOf = (at: readonly PropertyKey[]): string => {
      // The longest prefix of the issue's path that env or a flag set, else the file.
      for (let n = at.length; n > 0; n--) {
        const source = provenance.get(dottedPath(at.slice(0, n)));
        if (source !== undefined) return source;
      }
      return fileLabel;
    };
    throw new ConfigError([...problems, ...formatIssues(parsed.error.issues, raw, sourceOf)], {
      cause: parsed.error,
    });
  }
  return {
    config: deepFreeze(parsed.data),
    warnings,
    configFile: text === undefined ? undefined : configFile,
  };
};

const firstGiven = (
  candidates: readonly (readonly [string, RawSetting | undefined])[],
): { source: string; value: RawSetting } | undefined => {
  for (const [source, value] of candidates) {
    if (given(value)) return { source, value };
  }
  return undefined;
};

/** The file's text, or `undefined` when the default file does not exist. */
const readConfigFile = (file: string, explicitSource: string | undefined): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && explicitSource === undefined) return undefined;
    if (code === 'ENOENT') {
      throw new ConfigError(
        `config file ${file} (from ${explicitSource}) does not exist: create it or fix the path`,
        { cause: e },
      );
    }
    throw new ConfigError(
      `cannot read config file ${file} (${code ?? String(e)}): make it a readable YAML file`,
      { cause: e },
    );
  }
};

/**
 * YAML text -> the file layer: nulls dropped (`server:` with every child commented out counts as
 * unset), `~` expanded in paths, deprecated keys reported in `warnings`.
 */
const parseConfigText = (
  text: string,
  file: string,
  userHome: string,
  warnings: string[],
): Record<string, unknown> => {
  let documents: unknown[];
  try {
    documents = loadAll(text, { filename: file });
  } catch (e) {
    if (!(e instanceof YAMLException)) throw e;
    const where = e.mark ? ` at line ${e.mark.line + 1}, column ${e.mark.column + 1}` : '';
    const snippet = e.mark?.snippet ? `\n${e.mark.snippet}` : '';
    throw new ConfigError(
      `${file} is not valid YAML: ${e.reason}${where}: fix the syntax there (indentation, quoting)${snippet}`,
      { cause: e },
    );
  }
  if (documents.length > 1) {
    throw new ConfigError(
      `${file} holds ${documents.length} YAML documents: keep one (remove the "---" separators)`,
    );
  }
  const doc = documents[0] ?? {};
  if (!isPlainObject(doc)) {
    throw new ConfigError(
      `${file}: the top level is ${Array.isArray(doc) ? 'a list' : JSON.stringify(doc)}, not a ` +
        'mapping: write "key: value" lines such as "server:"',
    );
  }
  dropNulls(doc);
  if ('home' in doc) {
    throw new ConfigError(
      `${file}: home = ${JSON.stringify(doc.home)} cannot be set in the config file, which is ` +
        'found through it: set SVC_HOME or --home instead',
    );
  }
  for (const fieldPath of FILE_PATH_FIELDS) {
    const value = getAt(doc, fieldPath);
    if (typeof value === 'string') setAt(doc, fieldPath.join('.'), expandHome(value, userHome));
  }
  if (Array.isArray(doc.queues)) {
    doc.queues.forEach((q: unknown, i) => {
      if (isPlainObject(q) && 'maxActiveRuns' in q) {
        const name = typeof q.name === 'string' ? ` (${JSON.stringify(q.name)})` : '';
        warnings.push(
          `${file}: queues[${i}]${name} uses the deprecated key maxActiveRuns: rename it to maxConcurrency`,
        );
      }
    });
  }
  return doc;
};

/**
 * One variable or flag as an assignment, or none when it is unset, or chooses home or the file
 * (resolved before the layers are merged), or is malformed (its problem goes to `problems`).
 */
const toAssignment = (
  binding: { readonly path: string | null; readonly kind: SettingKind },
  raw: RawSetting | undefined,
  source: string,
  absolute: (p: string) => string,
  problems: string[],
): Assignment[] => {
  if (binding.path === null || binding.path === 'home' || !given(raw)) return [];
  try {
    const value =
      binding.kind === 'path'
        ? absolute(parseSettingText(raw, source))
        : parseSetting(binding.kind, raw, source);
    return [{ path: binding.path, value, source }];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems.push(...e.problems);
    return [];
  }
};

const envAssignments = (
  env: LoadConfigOptions['env'],
  absolute: (p: string) => string,
  problems: string[],
): Assignment[] => ENV_MAP.flatMap((b) => toAssignment(b, env[b.name], b.name, absolute, problems));

const flagAssignments = (
  argv: ConfigFlags,
  absolute: (p: string) => string,
  problems: string[],
): Assignment[] =>
  (Object.keys(FLAG_MAP) as (keyof ConfigFlags)[]).flatMap((flag) =>
    toAssignment(FLAG_MAP[flag], argv[flag], FLAG_MAP[flag].option, absolute, problems),
  );

const getAt = (root: Record<string, unknown>, at: readonly string[]): unknown => {
  let node: unknown = root;
  for (const key of at) node = isPlainObject(node) ? node[key] : undefined;
  return node;
};

/**
 * Sets `dotted` in `root`, creating missing mappings. Returns false, leaving `root` alone, when a
 * parent is not a mapping: the file's bad value then fails the schema with its own message.
 */
const setAt = (root: Record<string, unknown>, dotted: string, value: unknown): boolean => {
  const keys = dotted.split('.');
  const last = keys.pop();
  if (last === undefined) return false;
  let node = root;
  for (const key of keys) {
    const child = node[key] ?? {};
    if (!isPlainObject(child)) return false;
    node[key] = child;
    node = child;
  }
  node[last] = value;
  return true;
};

const dropNulls = (node: Record<string, unknown>): void => {
  for (const [key, value] of Object.entries(node)) {
    if (value === null) delete node[key];
    else if (isPlainObject(value)) dropNulls(value);
  }
};

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
};
