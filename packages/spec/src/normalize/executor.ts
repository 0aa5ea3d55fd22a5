import type { YamlPath } from '../yaml/problem.js';
import { EXECUTOR_TYPES, type ExecutorType } from '../model/step.js';
import {
  checkKeys,
  isRecord,
  readBool,
  readInt,
  readMap,
  readString,
  readStringList,
  readStringMap,
  show,
  suggest,
  type Ctx,
} from './context.js';
import { readEnvEntries, envToStrings } from './env.js';
import { readPullPolicy, readSsh } from './root-objects.js';

/** Names accepted for a type besides the canonical one (peer spellings). */
const ALIASES: Readonly<Record<string, ExecutorType>> = {
  command: 'shell',
  '': 'shell',
  container: 'docker',
  subworkflow: 'dag',
};

/** `executor`: a type name, or `{type, config}`. Returns the type and the raw config. */
export const readExecutorRef = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
): { type: ExecutorType; rawConfig: Record<string, unknown>; explicit: boolean } => {
  const fallback = { type: 'shell' as const, rawConfig: {}, explicit: false };
  if (v === undefined || v === null) return fallback;
  let typeName: unknown = v;
  let rawConfig: Record<string, unknown> = {};
  let typePath = path;
  if (isRecord(v)) {
    checkKeys(ctx, v, path, ['type', 'config'], 'executor');
    typeName = v.type;
    typePath = [...path, 'type'];
    rawConfig = readMap(ctx, v.config, [...path, 'config'], 'executor.config') ?? {};
    if (v.type === undefined) {
      ctx.report(path, `executor needs type: one of ${EXECUTOR_TYPES.join(', ')}`);
      return fallback;
    }
  }
  if (typeof typeName !== 'string') {
    ctx.report(typePath, `must be an executor type name, got ${show(typeName)}`);
    return fallback;
  }
  const type = (EXECUTOR_TYPES as readonly string[]).includes(typeName)
    ? (typeName as ExecutorType)
    : ALIASES[typeName];
  if (!type) {
    const hint = suggest(typeName, EXECUTOR_TYPES);
    ctx.report(
      typePath,
      `unknown executor type ${show(typeName)}: ${hint ? `did you mean "${hint}"? ` : ''}use one of ${EXECUTOR_TYPES.join(', ')}`,
    );
    return fallback;
  }
  return { type, rawConfig, explicit: true };
};

/**
 * Docker sub-objects pass Docker Engine API fields through: the camelCase keys the spec names are
 * checked; keys starting with a capital letter are the engine's own (`Memory`, `CapAdd`) and are
 * passed on unchanged; anything else is a problem.
 */
const readDockerObject = (
  ctx: Ctx,
  v: unknown,
  path: YamlPath,
  what: string,
  known: readonly string[],
): Record<string, unknown> | undefined => {
  const m = readMap(ctx, v, path, what);
  if (!m) return undefined;
  const lower = Object.fromEntries(Object.entries(m).filter(([k]) => !/^[A-Z]/.test(k)));
  checkKeys(
    ctx,
    lower,
    path,
    known,
    `${what} (Docker API fields starting with a capital letter are passed through)`,
  );
  return m;
};

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

export interface ExecutorCheckInput {
  readonly type: ExecutorType;
  readonly rawConfig: Record<string, unknown>;
  readonly configPath: YamlPath;
  /** The step's one-line command, script and child DAG, for executors that need them. */
  readonly cmdWithArgs: string | undefined;
  readonly script: string | undefined;
  readonly hasDagContainer: boolean;
}

/** Validates and compiles the config of each executor type (spec: "Executors" table). */
export const normalizeExecutorConfig = (
  ctx: Ctx,
  step: YamlPath,
  input: ExecutorCheckInput,
): Record<string, unknown> => {
  const { rawConfig: c, configPath: at } = input;
  switch (input.type) {
    case 'shell':
    case 'dag':
      checkKeys(ctx, c, at, [], `the ${input.type} executor's config`);
      return {};
    case 'docker': {
      checkKeys(
        ctx,
        c,
        at,
        [
          'image',
          'containerName',
          'pull',
          'autoRemove',
          'platform',
          'container',
          'host',
          'network',
          'exec',
        ],
        'the docker executor config',
      );
      const image = readString(ctx, c.image, [...at, 'image']);
      const containerName = readString(ctx, c.containerName, [...at, 'containerName']);
      if (!image && !containerName && !input.hasDagContainer)
        ctx.report(
          step,
          'docker executor needs image or containerName in its config (or a DAG-level container)',
        );
      const container = readDockerObject(
        ctx,
        c.container,
        [...at, 'container'],
        'docker container config',
        ['env', 'workingDir', 'exposedPorts', 'user', 'entrypoint', 'cmd', 'labels'],
      );
      if (container?.env !== undefined)
        container.env = envToStrings(
          readEnvEntries(ctx, container.env, [...at, 'container', 'env']),
        );
      const exec = readMap(ctx, c.exec, [...at, 'exec'], 'docker exec config');
      if (exec) {
        checkKeys(ctx, exec, [...at, 'exec'], ['user', 'workingDir', 'env'], 'docker exec config');
        if (exec.env !== undefined)
          exec.env = envToStrings(readEnvEntries(ctx, exec.env, [...at, 'exec', 'env']));
      }
      const platform = readString(ctx, c.platform, [...at, 'platform']);
      return {
        ...(image ? { image } : {}),
        ...(containerName ? { containerName } : {}),
        pull: readPullPolicy(ctx, c.pull, [...at, 'pull']),
        autoRemove: readBool(ctx, c.autoRemove, [...at, 'autoRemove']) ?? true,
        ...(platform ? { platform } : {}),
        ...(container ? { container } : {}),
        ...(c.host !== undefined
          ? {
              host:
                readDockerObject(ctx, c.host, [...at, 'host'], 'docker host config', [
                  'binds',
                  'portBindings',
                  'networkMode',
                  'autoRemove',
                  'privileged',
                ]) ?? {},
            }
          : {}),
        ...(c.network !== undefined
          ? {
              network:
                readDockerObject(ctx, c.network, [...at, 'network'], 'docker network config', [
                  'endpointsConfig',
                  'aliases',
                ]) ?? {},
            }
          : {}),
        ...(exec ? { exec } : {}),
      };
    }
    case 'ssh': {
      return { ...readSsh(ctx, c, at, 'the ssh executor config') };
    }
    case 'http': {
      checkKeys(
        ctx,
        c,
        at,
        ['headers', 'body', 'query', 'timeout', 'silent', 'skipTLSVerify', 'json', 'debug'],
        'the http executor config',
      );
      const cmd = input.cmdWithArgs?.trim() ?? '';
      const [method, url, ...rest] = cmd.split(/\s+/);
      if (!cmd)
        ctx.report(
          step,
          'http step needs command "<METHOD> <URL>", e.g. "GET https://example.com/health"',
        );
      else if (!method || !HTTP_METHODS.includes(method.toUpperCase()) || !url || rest.length > 0)
        ctx.report(
          [...step, 'command'],
          `http command must be "<METHOD> <URL>" with METHOD one of ${HTTP_METHODS.join(', ')}, got ${show(cmd)}`,
        );
      else if (!url.includes('$') && !URL.canParse(url))
        ctx.report([...step, 'command'], `http command has an invalid URL ${show(url)}`);
      const body = readString(ctx, c.body, [...at, 'body']);
      return {
        headers: readStringMap(ctx, c.headers, [...at, 'headers'], 'http headers') ?? {},
        ...(body !== undefined ? { body } : {}),
        query: readStringMap(ctx, c.query, [...at, 'query'], 'http query') ?? {},
        timeout:
          readInt(ctx, c.timeout, [...at, 'timeout'], {
            min: 0,
            hint: 'seconds, an integer of at least 0',
          }) ?? 0,
        silent: readBool(ctx, c.silent, [...at, 'silent']) ?? false,
        skipTLSVerify: readBool(ctx, c.skipTLSVerify, [...at, 'skipTLSVerify']) ?? false,
        json: readBool(ctx, c.json, [...at, 'json']) ?? false,
        debug: readBool(ctx, c.debug, [...at, 'debug']) ?? false,
      };
    }
    case 'mail': {
      checkKeys(
        ctx,
        c,
        at,
        ['to', 'from', 'subject', 'message', 'body', 'contentType', 'attachments', 'attachLogs'],
        'the mail executor config',
      );
      const to = readStringList(ctx, c.to, [...at, 'to']) ?? [];
      const from = readString(ctx, c.from, [...at, 'from']);
      if (to.length === 0) ctx.report(at, 'mail executor needs to: one address or a list');
      if (!from) ctx.report(at, 'mail executor needs from: the sender address');
      if (c.message !== undefined && c.body !== undefined)
        ctx.report(at, 'set either message or body, not both');
      return {
        to,
        from: from ?? '',
        subject: readString(ctx, c.subject, [...at, 'subject']) ?? '',
        message:
          readString(ctx, c.message ?? c.body, [
            ...at,
            c.message !== undefined ? 'message' : 'body',
          ]) ?? '',
        contentType: readString(ctx, c.contentType, [...at, 'contentType']) ?? 'text/plain',
        attachments: readStringList(ctx, c.attachments, [...at, 'attachments']) ?? [],
        attachLogs: readBool(ctx, c.attachLogs, [...at, 'attachLogs']) ?? false,
      };
    }
    case 'jq': {
      checkKeys(ctx, c, at, ['raw'], 'the jq executor config');
      if (input.script === undefined)
        ctx.report(step, 'jq step needs script: the JSON input (command holds the filter)');
      else if (!input.script.includes('$')) {
        try {
          JSON.parse(input.script);
        } catch (e) {
          ctx.report([...step, 'script'], `jq input is not valid JSON: ${(e as Error).message}`);
        }
      }
      return { raw: readBool(ctx, c.raw, [...at, 'raw']) ?? false };
    }
  }
};
