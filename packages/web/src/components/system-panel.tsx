import type { HealthResponse } from '@trellis/contract';
import { useApp } from '../app-context';
import { formatDuration } from '../lib/time';
import { usePoll } from '../lib/use-poll';

/** `name value` of one unlabelled sample in Prometheus text, or undefined. */
export const metricValue = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

const SIDEBAR_METRICS = [
  'svc_scheduler_running',
  'svc_dag_runs_currently_running',
  'svc_dag_runs_queued_total',
];

/** Health, version, uptime and the scheduler's state, in the sidebar. */
export const SystemPanel = () => {
  const { api, boot, credentials } = useApp();
  // /health is public and answers 503 with the reason when unhealthy: read the body either way.
  const health = usePoll(async () => {
    const res = await fetch(api.url('/health'), { credentials: 'omit' });
    return (await res.json()) as HealthResponse;
  }, []);
  const metrics = usePoll(async () => {
    // The caller's credentials, but no sign-out on a refusal: metrics may be private.
    const auth = credentials.get();
    // The three gauges shown, not every DAG's histograms (megabytes with 1,000 DAGs).
    const res = await fetch(api.url('/metrics', { name: SIDEBAR_METRICS.join(',') }), {
      headers: auth ? { Authorization: auth } : {},
      credentials: boot.oidc ? 'same-origin' : 'omit',
    });
    return res.ok ? await res.text() : '';
  }, []);
  const h = health.data;
  const scheduler = metrics.data ? metricValue(metrics.data, 'svc_scheduler_running') : undefined;
  const running = metrics.data
    ? metricValue(metrics.data, 'svc_dag_runs_currently_running')
    : undefined;
  const queued = metrics.data ? metricValue(metrics.data, 'svc_dag_runs_queued_total') : undefined;
  return (
    <div className="system" aria-label="System">
      <div>
        <span
          className={`dot ${h?.status === 'healthy' ? 'ok' : health.error || h ? 'bad' : ''}`}
        />
        {h
          ? h.status === 'healthy'
            ? 'Healthy'
            : `Unhealthy: ${h.error ?? ''}`
          : health.error
            ? 'Unreachable'
            : '…'}
      </div>
      {h && (
        <div className="muted small">
          v{h.version} · up {formatDuration(h.uptime * 1000)}
        </div>
      )}
      {scheduler !== undefined && (
        <div className="muted small">Scheduler {scheduler >= 1 ? 'running' : 'off'}</div>
      )}
      {running !== undefined && (
        <div className="muted small">
          {running} running · {queued ?? 0} queued
        </div>
      )}
    </div>
  );
};
