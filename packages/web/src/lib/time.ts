/** `1h 2m`, `3m 4s`, `5.2s`, for a duration in milliseconds. */
export const formatDuration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${sec}s`;
  return `${sec}s`;
};

/** Milliseconds between two ISO times; `end` empty means `now`. NaN when `start` is empty. */
export const elapsed = (start: string, end: string, now: number): number =>
  start ? (end ? Date.parse(end) : now) - Date.parse(start) : Number.NaN;

const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterFor = (timeZone: string | undefined): Intl.DateTimeFormat => {
  const key = timeZone ?? '';
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      ...(timeZone ? { timeZone } : {}),
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formatters.set(key, f);
  }
  return f;
};

/**
 * `2026-11-22 09:41:03 GMT+1`: the time in the browser's zone (or `timeZone`, an IANA name), with
 * the zone; `''` for an empty timestamp.
 */
export const formatTime = (iso: string, timeZone?: string): string => {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const part: Record<string, string> = {};
  for (const p of formatterFor(timeZone).formatToParts(d)) part[p.type] = p.value;
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second} ${part.timeZoneName}`;
};

/** `2026-11-22T08:41:03Z`: the UTC value, for a title on hover. */
export const utcTime = (iso: string): string => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19)}Z UTC`;
};

/** `12s ago`, `3m ago`, `2h ago`, `4d ago`. */
export const formatAge = (iso: string, now: number): string => {
  if (!iso) return 'never';
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  if (ms < 0) return 'just now';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
};
