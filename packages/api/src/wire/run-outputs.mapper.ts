import { nodeStatusLabel, runStatusLabel } from '@trellis/core';
import type { RunOutputs } from '@trellis/services';
import type { ApiRunOutputs } from '@trellis/contract';

/** A run's outputs with status labels, child runs nested the same way. */
export const toApiRunOutputs = (o: RunOutputs): ApiRunOutputs => ({
  name: o.name,
  dagRunId: o.dagRunId,
  status: o.status,
  statusLabel: runStatusLabel[o.status],
  params: o.params,
  outputs: { ...o.outputs },
  steps: o.steps.map((s) => ({
    step: s.step,
    status: s.status,
    statusLabel: nodeStatusLabel[s.status],
    outputs: { ...s.outputs },
    children: s.children.map(toApiRunOutputs),
  })),
});
