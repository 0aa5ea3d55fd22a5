import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir, copyFile, symlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type Dockerode from 'dockerode';

/** The image scripts/setup.sh imports: static busybox, `CMD ["/bin/sh"]`, `PATH=/bin`. */
export const BUSYBOX = 'local/busybox';

/** A name unique to this test process, for containers and images it creates. */
export const uniqueName = (what: string): string =>
  `trellis-test-${what}-${randomBytes(4).toString('hex')}`;

/** Builds `tag` from `dockerfile` (FROM the local busybox, no registry) unless it exists. */
export const ensureImage = async (
  docker: Dockerode,
  tag: string,
  dockerfile: string,
): Promise<void> => {
  try {
    await docker.getImage(tag).inspect();
    return;
  } catch {
    // build it
  }
  const dir = await mkdtemp(join(tmpdir(), 'trellis-img-'));
  try {
    await writeFile(join(dir, 'Dockerfile'), dockerfile);
    const stream = await docker.buildImage({ context: dir, src: ['Dockerfile'] }, { t: tag });
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
        const failed = events.find((e) => e.error);
        if (err || failed) reject(err ?? new Error(failed?.error));
        else resolve();
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** Removes containers by name, ignoring missing ones. */
export const removeContainers = async (
  docker: Dockerode,
  names: readonly string[],
): Promise<void> => {
  await Promise.all(
    names.map((n) =>
      docker
        .getContainer(n)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
};

/** Whether a container of that name exists. */
export const containerExists = async (docker: Dockerode, name: string): Promise<boolean> =>
  docker
    .getContainer(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );

/** A registry on 127.0.0.1 that serves one image and demands Basic auth. */
export interface TestRegistry {
  readonly host: string;
  /** Authorization headers of every request, in order. */
  readonly authorizations: string[];
  close(): Promise<void>;
}

const sha = (b: Buffer | string): string =>
  `sha256:${createHash('sha256').update(b).digest('hex')}`;

/**
 * A minimal Docker registry (v2 API) serving `repo:tag` = static busybox whose default command
 * prints `message`; every request needs `Basic user:password` (dockerd talks plain HTTP to
 * registries on loopback addresses).
 */
export const startTestRegistry = async (o: {
  repo: string;
  tag: string;
  username: string;
  password: string;
  message: string;
}): Promise<TestRegistry> => {
  const dir = await mkdtemp(join(tmpdir(), 'trellis-layer-'));
  await mkdir(join(dir, 'bin'));
  await copyFile('/bin/busybox', join(dir, 'bin', 'busybox'));
  await symlink('busybox', join(dir, 'bin', 'echo'));
  const tar = execFileSync('tar', ['-C', dir, '-cf', '-', '.'], { maxBuffer: 64 << 20 });
  await rm(dir, { recursive: true, force: true });
  const layer = gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({
      architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
      os: 'linux',
      config: { Env: ['PATH=/bin'], Cmd: ['/bin/echo', o.message] },
      rootfs: { type: 'layers', diff_ids: [sha(tar)] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
      config: {
        mediaType: 'application/vnd.docker.container.image.v1+json',
        size: config.length,
        digest: sha(config),
      },
      layers: [
        {
          mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
          size: layer.length,
          digest: sha(layer),
        },
      ],
    }),
  );
  const blobs = new Map([
    [sha(config), config],
    [sha(layer), layer],
  ]);
  const expected = `Basic ${Buffer.from(`${o.username}:${o.password}`).toString('base64')}`;
  const authorizations: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    authorizations.push(req.headers.authorization ?? '');
    if (req.headers.authorization !== expected) {
      res.writeHead(401, {
        'WWW-Authenticate': 'Basic realm="trellis-test"',
        'Content-Type': 'application/json',
      });
      res.end(
        JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }),
      );
      return;
    }
    const url = req.url ?? '';
    const send = (type: string, body: Buffer, digest: string): void => {
      res.writeHead(200, {
        'Content-Type': type,
        'Content-Length': body.length,
        'Docker-Content-Digest': digest,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (url === '/v2/' || url === '/v2') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    } else if (
      url === `/v2/${o.repo}/manifests/${o.tag}` ||
      url === `/v2/${o.repo}/manifests/${sha(manifest)}`
    ) {
      send('application/vnd.docker.distribution.manifest.v2+json', manifest, sha(manifest));
    } else if (url.startsWith(`/v2/${o.repo}/blobs/`)) {
      const digest = url.slice(`/v2/${o.repo}/blobs/`.length);
      const blob = blobs.get(digest);
      if (blob) send('application/octet-stream', blob, digest);
      else {
        res.writeHead(404);
        res.end();
      }
    } else {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known' }],
        }),
      );
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    authorizations,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
};
