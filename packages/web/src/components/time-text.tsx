import { formatTime, utcTime } from '../lib/time';

/**
 * A timestamp in the browser's zone (or `timeZone`) with its zone; hovering shows the UTC value.
 * An empty timestamp shows `empty`.
 */
export const TimeText = ({
  iso,
  timeZone,
  empty = '',
}: {
  iso: string;
  timeZone?: string;
  empty?: string;
}) =>
  iso ? (
    <time dateTime={iso} title={utcTime(iso)}>
      {formatTime(iso, timeZone)}
    </time>
  ) : (
    <>{empty}</>
  );
