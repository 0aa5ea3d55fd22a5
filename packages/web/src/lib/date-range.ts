/*
 * Day ranges as the dashboard and the runs page keep them in the URL: `YYYY-MM-DD` days in the
 * browser's zone, inclusive, turned into Unix seconds for the API.
 */

const p2 = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of a time in the browser's zone. */
export const dayOf = (ms: number): string => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;
};

/** Midnight (browser's zone) starting `day`, in ms; NaN for a text that is no day. */
export const dayStartMs = (day: string): number => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return Number.NaN;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime();
};

/** The day `n` days after `day` (n may be negative). */
export const addDays = (day: string, n: number): string => {
  const start = dayStartMs(day);
  const d = new Date(start);
  d.setDate(d.getDate() + n);
  return dayOf(d.getTime());
};

/** `from`..`to` days (inclusive) as Unix seconds: the first second of `from`, the last of `to`. */
export const daysToUnix = (from: string, to: string): { fromSec?: number; toSec?: number } => {
  const f = dayStartMs(from);
  const t = dayStartMs(to);
  return {
    ...(Number.isFinite(f) ? { fromSec: Math.floor(f / 1000) } : {}),
    ...(Number.isFinite(t) ? { toSec: Math.floor(dayStartMs(addDays(to, 1)) / 1000) - 1 } : {}),
  };
};

/** The browser's time zone name, e.g. `Europe/Paris`. */
export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;
