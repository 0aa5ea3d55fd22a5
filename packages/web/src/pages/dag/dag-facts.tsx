import type { DagDetailsResponse } from '@trellis/contract';
import { TimeText } from '../../components/time-text';

/** Schedule, type, default parameters, tags, and when it last ran. */
export const DagFacts = ({ d }: { d: DagDetailsResponse }) => (
  <dl className="facts">
    <div>
      <dt>Schedule</dt>
      <dd className="mono">{d.dag.schedule.map((s) => s.expression).join(', ') || '—'}</dd>
    </div>
    <div>
      <dt>Type</dt>
      <dd>{d.dag.type}</dd>
    </div>
    <div>
      <dt>Parameters</dt>
      <dd className="mono">{d.dag.defaultParams || '—'}</dd>
    </div>
    <div>
      <dt>Tags</dt>
      <dd>{d.dag.tags.join(', ') || '—'}</dd>
    </div>
    <div>
      <dt>Latest run</dt>
      <dd>
        <TimeText iso={d.latestDAGRun.startedAt} empty="never" />
      </dd>
    </div>
  </dl>
);
