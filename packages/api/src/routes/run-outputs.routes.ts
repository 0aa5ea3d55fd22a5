import { ChildRunPath, RunOutputsResponse, RunPath } from '@trellis/contract';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { toApiRunOutputs } from '../wire/run-outputs.mapper.js';

/** A run's outputs and a child run's (beyond the spec: docs/api.md, "Outputs"). */
export const runOutputRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/dag-runs/:name/:dagRunId/outputs', {
    params: RunPath,
    response: RunOutputsResponse,
    summary:
      "Every step's output variables, and each child run's outputs nested under the step that started it (`latest` for the most recent run)",
    handler: async ({ params }, deps) => {
      const run = await deps.reads.find(params);
      return {
        status: 200,
        body: { dagRunOutputs: toApiRunOutputs(await deps.reads.outputs(run)) },
      };
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/children/:childDAGRunId/outputs', {
    params: ChildRunPath,
    response: RunOutputsResponse,
    summary: "A child run's outputs, its own child runs nested",
    handler: async ({ params }, deps) => {
      const { root, child } = await deps.reads.childOf(params);
      const outputs = await deps.reads.outputs(child, root);
      return { status: 200, body: { dagRunOutputs: toApiRunOutputs(outputs) } };
    },
  }),
]);
