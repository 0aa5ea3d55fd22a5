import type Dockerode from 'dockerode';
import { homeOf } from '@trellis/core';
import type { RunHookContext } from '@trellis/engine';
import { expandVarsSync } from '@trellis/engine';
import type { ContainerSpec } from '@trellis/spec';
import { dockerMessage } from '../docker/container-io.js';
import { resolveBind } from '../docker/docker-config.js';
import { ensureImage } from '../docker/image-pull.js';
import { authFor, parseAuthConfig } from '../docker/registry-auth.js';

/** Keeps the container alive without the image's entrypoint (spec: startup keepalive). */
const KEEPALIVE = ['sh', '-c', 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done'];

/** Settings shared by every DAG-level container. */
export interface DagContainerSettings {
  readonly docker: Dockerode;
  readonly authConfig: string | undefined;
  /** spec: Limits, container readiness wait. @default 120000 */
  readonly readyTimeoutMs: number;
  /** How often readiness is checked. @default 250 */
  readonly pollMs: number;
}

/** `8080:80`, `127.0.0.1:8080:80`, `80`, with an optional `/udp`. */
const portSpec = (p: string): { key: string; binding?: { HostIp?: string; HostPort: string } } => {
  const [spec = '', proto = 'tcp'] = p.split('/');
  const parts = spec.split(':');
  const containerPort = parts.pop() ?? '';
  const key = `${containerPort}/${proto}`;
  if (parts.length === 0) return { key };
  const hostPort = parts.pop() ?? '';
  const ip = parts.pop();
  return { key, binding: { ...(ip ? { HostIp: ip } : {}), HostPort: hostPort } };
};

const abortable = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** A docker name from the DAG name and run id. */
const containerName = (dag: string, runId: string): string =>
  `trellis-${dag}-${runId}`.replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 120);

/**
 * The DAG-level container of one run (spec: Container (DAG level)): started once, on the first
 * step that needs it, kept alive while the run lasts, removed at the end unless `keepContainer`.
 * A start that fails is remembered: every step that needs the container fails with that error.
 */
export class DagContainer {
  readonly name: string;
  #started: Promise<{ container: Dockerode.Container } | { problem: string }> | undefined;

  constructor(
    private readonly spec: ContainerSpec,
    private readonly ctx: RunHookContext,
    private readonly settings: DagContainerSettings,
  ) {
    this.name = containerName(ctx.dag.name, ctx.record.dagRunId);
  }

  get user(): string | undefined {
    return this.spec.user;
  }

  get workingDir(): string | undefined {
    return this.spec.workingDir;
  }

  /** The running container, started on the first call; `abort` ends a wait for readiness. */
  ensureStarted(
    abort: AbortSignal,
  ): Promise<{ container: Dockerode.Container } | { problem: string }> {
    if (this.#started) return this.#started;
    const started = this.#start(abort).catch((e: unknown) => ({
      problem: `the DAG container ${this.name} could not start: ${dockerMessage(e)}`,
    }));
    this.#started = started;
    // A start cut short by a stop is not remembered: a handler may still need the container.
    void started.then(async (r) => {
      if (!('problem' in r) || !abort.aborted) return;
      await this.settings.docker
        .getContainer(this.name)
        .remove({ force: true })
        .catch(() => undefined);
      if (this.#started === started) this.#started = undefined;
    });
    return started;
  }

  /** Removes the container (unless `keepContainer`); a container never started is left alone. */
  async tearDown(): Promise<void> {
    if (!this.#started) return;
    const started = await this.#started;
    if (!('container' in started)) {
      await this.settings.docker
        .getContainer(this.name)
        .remove({ force: true })
        .catch(() => undefined);
      return;
    }
    if (this.spec.keepContainer) {
      this.ctx.log(`DAG container ${this.name} kept (keepContainer)`);
      return;
    }
    await started.container.remove({ force: true });
    this.ctx.log(`DAG container ${this.name} removed`);
  }

  async #start(
    abort: AbortSignal,
  ): Promise<{ container: Dockerode.Container } | { problem: string }> {
    const { docker } = this.settings;
    const s = this.spec;
    const auths = parseAuthConfig(this.settings.authConfig);
    if ('problem' in auths) return auths;
    const pullProblem = await ensureImage(docker, s.image, {
      policy: s.pullPolicy,
      platform: s.platform,
      auth: authFor(s.image, [this.ctx.dag.registryAuths, auths.auths]),
      log: (line) => this.ctx.log(line),
    });
    if (pullProblem) return { problem: pullProblem };

    const env = s.env.map((e) => `${e.key}=${expandVarsSync(e.value, [this.ctx.env])}`);
    const binds = s.volumes
      .filter((v) => v.includes(':'))
      .map((v) => resolveBind(v, this.ctx.workingDir, homeOf(this.ctx.env)));
    const anonymous = s.volumes.filter((v) => !v.includes(':'));
    const ports = s.ports.map(portSpec);
    const bindings: Record<string, { HostIp?: string; HostPort: string }[]> = {};
    for (const p of ports) if (p.binding) bindings[p.key] = [...(bindings[p.key] ?? []), p.binding];
    this.ctx.log(`starting the DAG container ${this.name} from ${s.image} (startup: ${s.startup})`);
    const container = await docker.createContainer({
      name: this.name,
      Image: s.image,
      Env: env,
      Labels: { 'trellis.dag': this.ctx.dag.name, 'trellis.run': this.ctx.record.dagRunId },
      ...(s.workingDir ? { WorkingDir: s.workingDir } : {}),
      ...(s.user ? { User: s.user } : {}),
      ...(s.startup === 'keepalive' ? { Entrypoint: KEEPALIVE, Cmd: [] } : {}),
      ...(s.startup === 'command' ? { Cmd: [...s.command] } : {}),
      ...(anonymous.length > 0
        ? { Volumes: Object.fromEntries(anonymous.map((v) => [v, {}])) }
        : {}),
      ...(ports.length > 0
        ? { ExposedPorts: Object.fromEntries(ports.map((p) => [p.key, {}])) }
        : {}),
      HostConfig: {
        ...(binds.length > 0 ? { Binds: binds } : {}),
        ...(Object.keys(bindings).length > 0 ? { PortBindings: bindings } : {}),
        ...(s.network ? { NetworkMode: s.network } : {}),
        RestartPolicy: { Name: s.restartPolicy },
      },
      ...(s.platform ? { platform: s.platform } : {}),
    });
    await container.start();
    const problem = await this.#waitReady(container, abort);
    if (problem) return { problem };
    this.ctx.log(`DAG container ${this.name} is ready`);
    return { container };
  }

  /** Waits for `waitFor` (and `logPattern`) within the readiness limit; a problem names the last state. */
  async #waitReady(
    container: Dockerode.Container,
    abort: AbortSignal,
  ): Promise<string | undefined> {
    const s = this.spec;
    const limitMs = this.settings.readyTimeoutMs;
    const pattern = s.logPattern !== undefined ? new RegExp(s.logPattern, 'm') : undefined;
    let last = 'not inspected yet';
    for (let waited = 0; ; waited += this.settings.pollMs) {
      if (abort.aborted)
        return `stopped while waiting for the DAG container ${this.name} (last state: ${last})`;
      const info = await container.inspect();
      const health = info.State.Health?.Status;
      last = `status ${info.State.Status}${health ? `, health ${health}` : ''}${info.State.ExitCode ? `, exit code ${info.State.ExitCode}` : ''}`;
      if (
        !info.State.Running &&
        info.State.Status !== 'created' &&
        info.State.Status !== 'restarting'
      )
        return `the DAG container ${this.name} stopped before it was ready (${last})${await this.#logTail(container)}`;
      let ready = info.State.Running;
      if (ready && s.waitFor === 'healthy') {
        if (health === undefined)
          return `waitFor: healthy needs an image with a HEALTHCHECK; ${s.image} has none (use waitFor: running)`;
        ready = health === 'healthy';
      }
      if (ready && pattern) {
        const logs = await this.#logs(container);
        ready = pattern.test(logs);
        if (!ready) last += `, logPattern /${s.logPattern}/ not seen yet`;
      }
      if (ready) return undefined;
      if (waited >= limitMs)
        return `the DAG container ${this.name} was not ready after ${limitMs / 1000}s (waitFor: ${s.waitFor}); last known state: ${last}`;
      await abortable(this.settings.pollMs, abort);
    }
  }

  async #logs(container: Dockerode.Container): Promise<string> {
    const buf = await container.logs({
      stdout: true,
      stderr: true,
      follow: false,
    });
    return demuxText(buf);
  }

  async #logTail(container: Dockerode.Container): Promise<string> {
    const text = await this.#logs(container).catch(() => '');
    const tail = text.trimEnd().split('\n').slice(-5).join('\n');
    return tail ? `; its last output:\n${tail}` : '';
  }
}

/** The text of a non-TTY log buffer (8-byte frame headers stripped). */
const demuxText = (buf: Buffer): string => {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
};
