/*
 * Run and step statuses (spec: States and transitions; ARCHITECTURE.md section 6). The API sends
 * `statusLabel` too; these tables give colours and the labels where only the integer is known
 * (the run history grid).
 */

export const RUN_STATUS_LABEL: Readonly<Record<number, string>> = {
  0: 'not started',
  1: 'running',
  2: 'failed',
  3: 'cancelled',
  4: 'finished',
  5: 'queued',
  6: 'partial success',
};

export const NODE_STATUS_LABEL: Readonly<Record<number, string>> = {
  0: 'not started',
  1: 'running',
  2: 'failed',
  3: 'cancelled',
  4: 'finished',
  5: 'skipped',
  6: 'partial success',
};

/** A CSS class suffix per status: `status-running` etc. (colours in styles.css). */
export const statusTone = (status: number): string =>
  (
    ({
      0: 'idle',
      1: 'running',
      2: 'failed',
      3: 'cancelled',
      4: 'ok',
      5: 'queued',
      6: 'partial',
    }) as Record<number, string>
  )[status] ?? 'idle';

/** Node status 5 is "skipped", not "queued". */
export const nodeTone = (status: number): string => (status === 5 ? 'skipped' : statusTone(status));

export const isActiveRun = (status: number): boolean => status === 1 || status === 5;
