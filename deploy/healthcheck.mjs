// The container health check of deploy/Dockerfile (exec form, no curl in the image):
//
//   node healthcheck.mjs [<url>]              the API at <url> answers GET /api/v2/health with 200
//                                             (default http://127.0.0.1:$SVC_PORT$SVC_BASE_PATH,
//                                             port 8080): the coordinator / start-all container
//   node healthcheck.mjs --worker <id> <url>...  a coordinator at one of the <url>s lists worker
//                                             <id> as WORKER_HEALTH_STATUS_HEALTHY (GET
//                                             /api/v2/workers): a worker container (a worker
//                                             serves no HTTP); several URLs for replicated
//                                             coordinators (the worker uses one of them)
//
// With SVC_AUTH_TOKEN set, it is sent as a bearer token. Exit 0 when healthy, 1 (and one line
// saying why) otherwise.
import process from 'node:process';

// eslint-disable-next-line no-restricted-properties -- a standalone script in the image, outside the packages: it cannot load @trellis/core's config
const env = process.env;
const args = process.argv.slice(2);
const workerAt = args.indexOf('--worker');
const workerId = workerAt >= 0 ? args[workerAt + 1] : undefined;
if (workerAt >= 0 && !workerId) {
  console.error('usage: healthcheck.mjs --worker <id> <coordinator url>');
  process.exit(2);
}
const rest = args.filter((_, i) => workerAt < 0 || (i !== workerAt && i !== workerAt + 1));
const bases = (
  rest.length > 0 ? rest : [`http://127.0.0.1:${env.SVC_PORT ?? '8080'}${env.SVC_BASE_PATH ?? ''}`]
).map((u) => u.replace(/\/+$/, '').concat('/api/v2'));
const headers = env.SVC_AUTH_TOKEN ? { authorization: `Bearer ${env.SVC_AUTH_TOKEN}` } : {};

const get = async (path, base = bases[0]) => {
  const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(4000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${base}${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
};

try {
  if (workerId === undefined) {
    await get('/health');
  } else {
    const seen = [];
    for (const base of bases) {
      const { workers } = await get('/workers', base).catch(() => ({ workers: [] }));
      const me = workers.find((w) => w.id === workerId);
      if (me?.health_status === 'WORKER_HEALTH_STATUS_HEALTHY') process.exit(0);
      seen.push(`${me ? me.health_status : 'not registered'} at ${base}`);
    }
    throw new Error(`worker ${workerId} is ${seen.join(', ')}`);
  }
} catch (err) {
  console.error(`unhealthy: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
