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
import { readDockerConfig } from './executor-docker.js';
import type { ExecutorCheckInput } from './executor-input.js';
import { readSsh } from './root-objects.js';

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

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

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
    case 'docker':
      return readDockerConfig(ctx, step, input);
    case 'ssh': {
      return { ...readSsh(ctx, c, at, 'the ssh executor config') };
    }
    case 'http':
      return readHttpConfig(ctx, step, input);
    case 'mail':
      return readMailConfig(ctx, input);
    case 'jq':
      return readJqConfig(ctx, step, input);
  }
};

/** The http executor: `command` is "<METHOD> <URL>"; the config holds the rest of the request. */
const readHttpConfig = (
  ctx: Ctx,
  step: YamlPath,
  input: ExecutorCheckInput,
): Record<string, unknown> => {
  const { rawConfig: c, configPath: at } = input;
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
};

/** The mail executor: recipients, sender, subject and message (or its peer spelling body). */
const readMailConfig = (ctx: Ctx, input: ExecutorCheckInput): Record<string, unknown> => {
  const { rawConfig: c, configPath: at } = input;
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
      readString(ctx, c.message ?? c.body, [...at, c.message !== undefined ? 'message' : 'body']) ??
      '',
    contentType: readString(ctx, c.contentType, [...at, 'contentType']) ?? 'text/plain',
    attachments: readStringList(ctx, c.attachments, [...at, 'attachments']) ?? [],
    attachLogs: readBool(ctx, c.attachLogs, [...at, 'attachLogs']) ?? false,
  };
};

/** The jq executor: `command` is the filter, `script` the JSON input. */
const readJqConfig = (
  ctx: Ctx,
  step: YamlPath,
  input: ExecutorCheckInput,
): Record<string, unknown> => {
  const { rawConfig: c, configPath: at } = input;
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
};
