import { formatAge, formatTime, utcTime } from '../lib/time';

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

/** `12s ago`; hovering shows the time in the browser's zone with its zone, and the UTC value. */
export const AgeText = ({ iso, now }: { iso: string; now: number }) =>
  iso ? (
    <time dateTime={iso} title={`${formatTime(iso)} (${utcTime(iso)})`}>
      {formatAge(iso, now)}
    </time>
  ) : (
    <>{formatAge(iso, now)}</>
  );
