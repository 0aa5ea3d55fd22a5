import type { ApiRunDetails } from '@trellis/contract';
import { elapsed, formatDuration } from '../../lib/time';
import { TimeText } from '../../components/time-text';

/** Started, finished, duration (ticking while it runs), when queued, and the parameters. */
export const RunFacts = ({ r, now }: { r: ApiRunDetails; now: number }) => (
  <dl className="facts">
    <div>
      <dt>Started</dt>
      <dd>
        <TimeText iso={r.startedAt} empty="—" />
      </dd>
    </div>
    <div>
      <dt>Finished</dt>
      <dd>
        <TimeText iso={r.finishedAt} empty="—" />
      </dd>
    </div>
    <div>
      <dt>Duration</dt>
      <dd>{formatDuration(elapsed(r.startedAt, r.finishedAt, now)) || '—'}</dd>
    </div>
    {r.queuedAt && (
      <div>
        <dt>Queued</dt>
        <dd>
          <TimeText iso={r.queuedAt} />
        </dd>
      </div>
    )}
    {r.waitReason && (
      <div>
        <dt>Waiting</dt>
        <dd data-testid="wait-reason">{r.waitReason.message}</dd>
      </div>
    )}
    <div>
      <dt>Parameters</dt>
      <dd className="mono">{r.params && r.params !== '{}' ? r.params : '—'}</dd>
    </div>
  </dl>
);
