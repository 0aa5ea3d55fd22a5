import type Dockerode from 'dockerode';
import { dockerMessage } from './container-io.js';
import type { DockerAuth } from './registry-auth.js';

/** `pull` / `pullPolicy` (spec): always pull, pull when missing, or never. */
export type PullPolicy = 'always' | 'missing' | 'never';

const hasImage = async (docker: Dockerode, image: string): Promise<boolean> => {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 404) return false;
    throw e;
  }
};

/**
 * Makes `image` available under `policy`. Returns a problem sentence for a missing image or a
 * failed pull; throws only when the engine cannot be asked; `log` gets one line per pull.
 */
export const ensureImage = async (
  docker: Dockerode,
  image: string,
  o: {
    readonly policy: PullPolicy;
    readonly platform?: string | undefined;
    readonly auth?: DockerAuth | undefined;
    readonly log: (line: string) => void;
  },
): Promise<string | undefined> => {
  // An engine that cannot be reached throws from here: the caller reports it as such.
  if (o.policy !== 'always' && (await hasImage(docker, image))) return undefined;
  if (o.policy === 'never')
    return `image ${image} is not present and pull is never: load or build it first (docker load / docker build), or set pull: missing`;
  try {
    o.log(`pulling image ${image}${o.auth ? ` as ${o.auth.username}` : ''}`);
    const stream = await docker.pull(image, {
      ...(o.platform ? { platform: o.platform } : {}),
      ...(o.auth ? { authconfig: o.auth } : {}),
    });
    const problem = await new Promise<string | undefined>((resolve) => {
      docker.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
        const failed = events.find((e) => e.error !== undefined);
        resolve(err ? err.message : failed?.error);
      });
    });
    if (problem) return `cannot pull image ${image}: ${problem}`;
    return undefined;
  } catch (e) {
    return `cannot pull image ${image}: ${dockerMessage(e)}`;
  }
};
