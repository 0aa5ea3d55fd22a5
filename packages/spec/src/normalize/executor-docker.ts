import type { YamlPath } from '../yaml/problem.js';
import { checkKeys, readBool, readMap, readString, type Ctx } from './context.js';
import { envToStrings, readEnvEntries } from './env.js';
import type { ExecutorCheckInput } from './executor-input.js';
import { readPullPolicy } from './root-objects.js';

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

/** The docker executor: an image (or a running container) and the Docker API objects. */
export const readDockerConfig = (
  ctx: Ctx,
  step: YamlPath,
  input: ExecutorCheckInput,
): Record<string, unknown> => {
  const { rawConfig: c, configPath: at } = input;
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
  const container = readDockerContainer(ctx, c.container, at);
  const exec = readDockerExec(ctx, c.exec, at);
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
};

/** `container`: Docker container config; its `env` compiled to `KEY=value` strings. */
const readDockerContainer = (
  ctx: Ctx,
  v: unknown,
  at: YamlPath,
): Record<string, unknown> | undefined => {
  const container = readDockerObject(ctx, v, [...at, 'container'], 'docker container config', [
    'env',
    'workingDir',
    'exposedPorts',
    'user',
    'entrypoint',
    'cmd',
    'labels',
  ]);
  if (container?.env !== undefined)
    container.env = envToStrings(readEnvEntries(ctx, container.env, [...at, 'container', 'env']));
  return container;
};

/** `exec`: how a command runs in an existing container; its `env` compiled like the container's. */
const readDockerExec = (
  ctx: Ctx,
  v: unknown,
  at: YamlPath,
): Record<string, unknown> | undefined => {
  const exec = readMap(ctx, v, [...at, 'exec'], 'docker exec config');
  if (exec) {
    checkKeys(ctx, exec, [...at, 'exec'], ['user', 'workingDir', 'env'], 'docker exec config');
    if (exec.env !== undefined)
      exec.env = envToStrings(readEnvEntries(ctx, exec.env, [...at, 'exec', 'env']));
  }
  return exec;
};
