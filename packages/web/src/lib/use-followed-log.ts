import { useEffect, useMemo, useRef, useState } from 'react';
import type { ApiError } from '../api/client';
import { LogFollower, type ReadLogWindow } from './log-follower';

/**
 * A {@link LogFollower} for the log `sourceKey` names, read on a timer while `live` (doubling the
 * wait after errors) and once more when it stops being live, for the last lines. `version` changes
 * whenever new lines arrived.
 */
export const useFollowedLog = (read: ReadLogWindow, live: boolean, sourceKey: string) => {
  const follower = useMemo(() => new LogFollower(read), [sourceKey]);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<ApiError>();
  const liveRef = useRef(live);
  liveRef.current = live;

  useEffect(() => {
    let cancelled = false;
    let timer: number | undefined;
    let failures = 0;
    const tick = async () => {
      try {
        await follower.poll();
        failures = 0;
        if (!cancelled) {
          setVersion(follower.version);
          setError(undefined);
        }
      } catch (e) {
        failures++;
        if (!cancelled) setError(e as ApiError);
      }
      if (cancelled) return;
      // One more read after the run ends picks up the last lines; then stop.
      if (liveRef.current || failures > 0)
        timer = window.setTimeout(() => void tick(), Math.min(30_000, 1000 * 2 ** failures));
    };
    void tick();
    return () => {
      cancelled = true;
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [follower]);

  // A run that just finished: read once more for its last lines.
  useEffect(() => {
    if (!live)
      void follower.poll().then(
        () => setVersion(follower.version),
        () => undefined,
      );
  }, [live, follower]);

  return { follower, version, error };
};
