import type { DagDetailsResponse } from '@trellis/contract';
import { TimeText } from '../../components/time-text';
import { cronWords } from '../../lib/cron-words';

/** Each start schedule in words (the expression on hover), its zone, and its next fire times. */
const ScheduleFacts = ({ d }: { d: DagDetailsResponse }) =>
  d.schedules.length === 0 ? (
    <>—</>
  ) : (
    <>
      {d.schedules.map((s) => (
        <div key={s.expression} className="schedule" data-schedule={s.expression}>
          <span className="schedule-words" title={s.expression}>
            {cronWords(s.cron)} <span className="muted small">({s.timeZone})</span>
          </span>
          {s.nextFires.length > 0 && (
            <ol className="next-fires small" aria-label={`Next runs of ${s.expression}`}>
              {s.nextFires.map((f) => (
                <li key={f}>
                  <TimeText iso={f} timeZone={s.timeZone} />
                </li>
              ))}
            </ol>
          )}
        </div>
      ))}
    </>
  );

/** Schedule, type, default parameters, tags, and when it last ran. */
export const DagFacts = ({ d }: { d: DagDetailsResponse }) => (
  <dl className="facts">
    <div>
      <dt>Schedule</dt>
      <dd>
        <ScheduleFacts d={d} />
      </dd>
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
