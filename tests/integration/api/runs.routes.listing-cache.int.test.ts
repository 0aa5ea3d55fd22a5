import { describe, expect, it } from 'vitest';
import { useRunRoutes } from '../support/run-routes-fixture.js';

/**
 * GET /dag-runs keeps each listing's body between requests (listing-body-cache.ts): it must
 * answer a changed listing at once, never the kept body of before.
 */
const t = useRunRoutes();
const { api, stepRunning, startAndFinish } = t;

const listing = async (path = '/api/v2/dag-runs?name=a') => {
  const res = await api().get(path).expect(200);
  const runs = (res.body as { dagRuns: { dagRunId: string; status: number }[] }).dagRuns;
  return { runs: runs.map((r) => `${r.dagRunId}:${r.status}`), etag: res.headers.etag as string };
};

describe('listing bodies kept between requests', () => {
  it('shows a status change, a new run and a deleted run in the next listing', async () => {
    t.h.dag('a', 'steps:\n  - {name: wait, command: "sleep 30"}\n');
    const running = stepRunning('wait');
    await api().post('/api/v2/dags/a/start').send({ dagRunId: 'a1' }).expect(200);
    await running;
    const first = await listing();
    expect(first.runs).toEqual(['a1:1']);
    expect(await listing()).toEqual(first); // kept: the same body and tag
    await api().get('/api/v2/dag-runs?name=a').set('If-None-Match', first.etag).expect(304);

    await api().post('/api/v2/dag-runs/a/a1/stop').expect(200);
    await t.h.finished('a', 'a1');
    const stopped = await listing();
    expect(stopped.runs).toEqual(['a1:3']);
    expect(stopped.etag).not.toBe(first.etag);
    await api().get('/api/v2/dag-runs?name=a').set('If-None-Match', first.etag).expect(200);

    t.h.dag('a', 'steps:\n  - "true"\n');
    await startAndFinish('a', { dagRunId: 'a2' });
    expect((await listing()).runs).toEqual(['a2:4', 'a1:3']);
    expect((await listing('/api/v2/dag-runs/a?page=1&perPage=1')).runs).toEqual(['a2:4']);

    await t.h.store.deleteRun({ name: 'a', dagRunId: 'a2' });
    expect((await listing()).runs).toEqual(['a1:3']);
    expect((await listing('/api/v2/dag-runs/a?page=1&perPage=1')).runs).toEqual(['a1:3']);
  });
});
