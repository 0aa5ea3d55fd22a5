import { NodeStatus, RunStatus, nodeStatusLabel, runStatusLabel } from '@trellis/contract';

/*
 * Run and step statuses (spec: States and transitions). The API sends `statusLabel` too; the
 * contract's label tables name a status where only the integer is known (the run history grid),
 * and the tones below colour them.
 */

export const RUN_STATUS_LABEL: Readonly<Record<number, string>> = runStatusLabel;

export const NODE_STATUS_LABEL: Readonly<Record<number, string>> = nodeStatusLabel;

/** A CSS class suffix per status: `status-running` etc. (colours in styles.css). */
export const statusTone = (status: number): string =>
  (
    ({
      [RunStatus.NotStarted]: 'idle',
      [RunStatus.Running]: 'running',
      [RunStatus.Failed]: 'failed',
      [RunStatus.Cancelled]: 'cancelled',
      [RunStatus.Succeeded]: 'ok',
      [RunStatus.Queued]: 'queued',
      [RunStatus.PartiallySucceeded]: 'partial',
    }) as Record<number, string>
  )[status] ?? 'idle';

/** Node status 5 is "skipped", not "queued". */
export const nodeTone = (status: number): string =>
  status === NodeStatus.Skipped ? 'skipped' : statusTone(status);

export const isActiveRun = (status: number): boolean =>
  status === RunStatus.Running || status === RunStatus.Queued;
