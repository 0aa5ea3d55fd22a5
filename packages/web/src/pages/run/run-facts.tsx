import type { ApiRunDetails } from '@trellis/contract';
import { seg } from '../../api/client';
import { Link } from '../../router';
import { elapsed, formatDuration } from '../../lib/time';
import { TimeText } from '../../components/time-text';

/** The parent run of a child run, started, finished, duration (ticking while it runs), when queued, and the parameters. */
export const RunFacts = ({
  r,
  now,
  childLink,
}: {
  r: ApiRunDetails;
  now: number;
  childLink: (childRunId: string) => string;
}) => (
  <dl className="facts">
    {r.parentDAGRunId && r.parentDAGRunId !== r.dagRunId && (
      <div>
        <dt>Parent run</dt>
        <dd data-testid="parent-run">
          <Link
            to={
              r.parentDAGRunId !== r.rootDAGRunId
                ? childLink(r.parentDAGRunId)
                : `/runs/${seg(r.rootDAGRunName)}/${seg(r.rootDAGRunId)}`
            }
          >
            {r.parentDAGRunName} <span className="mono">{r.parentDAGRunId}</span>
          </Link>
        </dd>
      </div>
    )}
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
