import cronstrue from 'cronstrue';

/**
 * A cron expression in words (`At 02:30 AM` → `At 02:30`), by cronstrue; the expression itself
 * when cronstrue cannot read it (a `@daily` style alias, a croner-only field).
 */
export const cronWords = (cron: string): string => {
  try {
    return cronstrue.toString(cron, { use24HourTimeFormat: true, verbose: false });
  } catch {
    return cron;
  }
};

/** The cron fields of a schedule expression, without its `CRON_TZ=` / `TZ=` prefix. */
export const cronOf = (expression: string): string =>
  expression.replace(/^\s*(CRON_TZ|TZ)=\S+\s+/, '');
