import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeRuntime, type Runtime } from '../../src/wiring/runtime.js';

/**
 * Instances of one cluster in one process: each `instance` is a runtime with its own home
 * (`root/home-<n>`), the shared DAGs folder `root/dags` and the database at `url`. Its lines go
 * to `lines`; `runtimes` holds every one made, for the test to close. Test support only.
 */
export const sharedDbInstances = (root: () => string) => {
  const runtimes: Runtime[] = [];
  const instance = async (n: number, url: string, lines: string[]): Promise<Runtime> => {
    const home = join(root(), `home-${n}`);
    mkdirSync(home);
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      env: {
        SVC_HOME: home,
        SVC_DAGS_DIR: join(root(), 'dags'),
        SVC_DATABASE_URL: url,
        // fake clocks move the cron, not the lease's renewals: a lease that outlives the test
        SVC_DATABASE_LEASE_TTL_MS: '600000',
        PATH: '/usr/bin:/bin',
      },
      cwd: home,
    };
    const rt = await makeRuntime(io, {});
    runtimes.push(rt);
    return rt;
  };
  return { runtimes, instance };
};
