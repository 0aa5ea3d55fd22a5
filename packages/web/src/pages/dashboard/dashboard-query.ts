import { prefetchGet } from '../../api/prefetch';
import type { BootConfig } from '../../boot-config';
import { dayOf, daysToUnix } from '../../lib/date-range';

export const DASHBOARD_PATH = '/dashboard';

/** The dashboard's days from its URL (`?from=YYYY-MM-DD&to=YYYY-MM-DD`, browser's zone); today. */
export const dashboardRange = (search: URLSearchParams, nowMs = Date.now()) => {
  const today = dayOf(nowMs);
  const from = search.get('from') || today;
  const to = search.get('to') || from;
  return { from, to, today };
};

/** `GET /dashboard`'s query for those days (Unix seconds). */
export const dashboardQuery = (r: { from: string; to: string }) => {
  const { fromSec, toSec } = daysToUnix(r.from, r.to);
  return { from: fromSec, to: toSec };
};

/**
 * On the home page, asks for the dashboard's data at once (main.tsx), in parallel with the
 * session check the app starts with; the page's first load takes that answer.
 */
export const prefetchDashboard = (boot: BootConfig, authorization: string | undefined): void => {
  const path = window.location.pathname.slice(boot.basePath.length) || '/';
  if (path !== '/' && path !== DASHBOARD_PATH) return;
  const q = dashboardQuery(dashboardRange(new URLSearchParams(window.location.search)));
  const p = new URLSearchParams();
  if (q.from !== undefined) p.set('from', String(q.from));
  if (q.to !== undefined) p.set('to', String(q.to));
  const qs = p.toString();
  prefetchGet(`${boot.apiBase}${DASHBOARD_PATH}${qs ? `?${qs}` : ''}`, authorization, boot.oidc);
};
