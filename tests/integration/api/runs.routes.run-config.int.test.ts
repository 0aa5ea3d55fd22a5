import { describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { useRunRoutes } from '../support/run-routes-fixture.js';

/** runConfig.disableParamEdit / disableRunIdEdit hold for API callers, not only in the web UI. */
const t = useRunRoutes();
const { api, startAndFinish } = t;

const locked = (rc: string): string =>
  `params: WHO=default\nrunConfig: {${rc}}\nsteps:\n  - name: greet\n    command: echo "hi \${WHO}"\n`;

describe('runConfig on start and enqueue', () => {
  for (const action of ['start', 'enqueue'] as const) {
    it(`${action}: refuses params on a DAG with disableParamEdit, 400 naming the setting`, async () => {
      t.h.dag('fixed', locked('disableParamEdit: true'));
      expectError(
        await api().post(`/api/v2/dags/fixed/${action}`).send({ params: 'WHO=me' }),
        400,
        'bad_request',
        /runConfig\.disableParamEdit.*leave out "params"/,
      );
      // a run id is still the caller's to choose
      const res = await api()
        .post(`/api/v2/dags/fixed/${action}`)
        .send({ dagRunId: `ok-${action}` });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ dagRunId: `ok-${action}` });
    });

    it(`${action}: refuses a dagRunId on a DAG with disableRunIdEdit, 400 naming the setting`, async () => {
      t.h.dag('fixed', locked('disableRunIdEdit: true'));
      expectError(
        await api().post(`/api/v2/dags/fixed/${action}`).send({ dagRunId: 'mine' }),
        400,
        'bad_request',
        /runConfig\.disableRunIdEdit.*leave out "dagRunId"/,
      );
      const res = await api().post(`/api/v2/dags/fixed/${action}`).send({ params: 'WHO=me' });
      expect(res.status).toBe(200);
    });
  }

  it('runs a locked DAG with its defaults when the request leaves both out', async () => {
    t.h.dag('fixed', locked('disableParamEdit: true, disableRunIdEdit: true'));
    const run = await startAndFinish('fixed', { params: '  ' });
    expect(run.params).toEqual([{ name: 'WHO', value: 'default' }]);
  });
});
