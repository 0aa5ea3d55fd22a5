import { Cron } from 'croner';
import type { YamlPath } from '../yaml/problem.js';
import type { ScheduleEntry, Schedules } from '../model/dag.js';
import { checkKeys, isRecord, readStringList, show, type Ctx } from './context.js';

const DESCRIPTORS = [
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
];

const zoneCache = new Map<string, boolean>();

/** True when `zone` is an IANA time zone name this runtime knows (answers are cached). */
export const isValidTimeZone = (zone: string): boolean => {
  let ok = zoneCache.get(zone);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      ok = true;
    } catch {
      ok = false;
    }
    if (zoneCache.size < 1000) zoneCache.set(zone, ok);
  }
  return ok;
};

/** The five cron fields in order, with their ranges (day-of-week 7 is Sunday, as 0). */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 7 },
] as const;

/** One value of a field: a number, `*`, `?`, a month/day name, or croner's `L`, `W` and `#` forms. */
const PIECE = /^(?:\*|\?|\d+|[A-Za-z]{3}|L|LW|\d*L|\d+W|\d+#\d+)$/i;

/**
 * Checks each field's values and ranges, so a problem names the field and the value as written
 * (croner's own messages count day and month from 0 and name its internals).
 */
const cronFieldProblem = (fields: readonly string[]): string | undefined => {
  for (const [i, field] of fields.entries()) {
    const rule = FIELDS[i];
    if (!rule) break;
    for (const part of field.split(',')) {
      const [base = '', step, ...more] = part.split('/');
      if (more.length > 0 || (step !== undefined && !/^[1-9]\d*$/.test(step)))
        return `${rule.name} step in ${JSON.stringify(part)} must be a positive whole number, as in */15`;
      const pieces = base.split('-');
      for (const piece of pieces) {
        if (!PIECE.test(piece))
          return `${rule.name} ${JSON.stringify(part)} is not valid: use a number, a range (1-5), a list (1,15) or a step (*/10)`;
        if (/^\d+$/.test(piece) && (Number(piece) < rule.min || Number(piece) > rule.max))
          return `${rule.name} ${Number(piece)} is out of range ${rule.min}-${rule.max}`;
      }
    }
  }
  return undefined;
};

/**
 * Parses one expression: an optional `CRON_TZ=<zone> ` or `TZ=<zone> ` prefix, then five cron
 * fields (minute hour day-of-month month day-of-week) or a descriptor such as `@daily`.
 * Returns the entry, or the reason it is invalid.
 */
export const parseScheduleExpression = (expression: string): ScheduleEntry | string => {
  const text = expression.trim();
  const m = /^(?:CRON_TZ|TZ)=(\S*)\s+(.*)$/s.exec(text);
  const timezone = m?.[1];
  const cron = (m ? (m[2] ?? '') : text).trim();
  if (m && !timezone)
    return `empty time zone in ${JSON.stringify(expression)}: write CRON_TZ=<zone> such as CRON_TZ=Europe/Berlin`;
  if (timezone !== undefined && !isValidTimeZone(timezone))
    return `unknown time zone ${JSON.stringify(timezone)}: use an IANA name such as "Europe/Berlin" or "UTC"`;
  if (cron === '') return 'empty cron expression';
  const isDescriptor = DESCRIPTORS.includes(cron.toLowerCase());
  if (!isDescriptor && cron.split(/\s+/).length !== 5)
    return `invalid cron expression ${JSON.stringify(cron)}: use five fields (minute hour day-of-month month day-of-week), e.g. "0 2 * * *", or @hourly/@daily/@weekly/@monthly/@yearly`;
  const fieldProblem = isDescriptor ? undefined : cronFieldProblem(cron.split(/\s+/));
  if (fieldProblem) return `invalid cron expression ${JSON.stringify(cron)}: ${fieldProblem}`;
  try {
    new Cron(cron, { paused: true, ...(timezone ? { timezone } : {}) });
  } catch (e) {
    return `invalid cron expression ${JSON.stringify(cron)}: ${(e as Error).message.replace(/^CronPattern: /, '')}`;
  }
  return { expression: text, cron, ...(timezone ? { timezone } : {}) };
};

const readEntries = (ctx: Ctx, v: unknown, path: YamlPath): ScheduleEntry[] => {
  const list = readStringList(ctx, v, path) ?? [];
  const out: ScheduleEntry[] = [];
  list.forEach((expr, i) => {
    const r = parseScheduleExpression(expr);
    if (typeof r === 'string') ctx.report(Array.isArray(v) ? [...path, i] : path, r);
    else out.push(r);
  });
  return out;
};

/** `schedule`: a string, a list, or a mapping with `start`, `stop` and `restart` lists. */
export const readSchedule = (ctx: Ctx, v: unknown, path: YamlPath): Schedules => {
  const empty: Schedules = { start: [], stop: [], restart: [] };
  if (v === undefined || v === null) return empty;
  if (isRecord(v)) {
    checkKeys(ctx, v, path, ['start', 'stop', 'restart'], 'schedule');
    return {
      start: readEntries(ctx, v.start, [...path, 'start']),
      stop: readEntries(ctx, v.stop, [...path, 'stop']),
      restart: readEntries(ctx, v.restart, [...path, 'restart']),
    };
  }
  if (typeof v !== 'string' && !Array.isArray(v)) {
    ctx.report(
      path,
      `must be a cron expression, a list of them, or a mapping with start/stop/restart, got ${show(v)}`,
    );
    return empty;
  }
  return { ...empty, start: readEntries(ctx, v, path) };
};
