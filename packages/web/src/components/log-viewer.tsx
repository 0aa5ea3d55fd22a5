import { useEffect, useMemo, useRef, useState } from 'react';
import type { ApiError } from '../api/client';
import { LogFollower, type ReadLogWindow } from '../lib/log-follower';
import { ErrorBox } from './error-box';

const LINE_HEIGHT = 18;
const OVERSCAN = 30;

/**
 * A log with follow mode: the {@link LogFollower} reads new lines while `live` (the run is
 * running) and the view draws only the rows on screen, so a 200,000-line log scrolls as smoothly
 * as a short one. Following sticks to the bottom; scrolling up stops following, "Follow" resumes.
 */
export const LogViewer = ({
  read,
  live,
  label,
  sourceKey,
}: {
  read: ReadLogWindow;
  live: boolean;
  label: string;
  /** Changes when the log shown changes (another step or stream). */
  sourceKey: string;
}) => {
  const follower = useMemo(() => new LogFollower(read), [sourceKey]);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<ApiError>();
  const [follow, setFollow] = useState(true);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewH, setViewH] = useState(400);
  const box = useRef<HTMLDivElement>(null);
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

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    setViewH(el.clientHeight);
    const ro = new ResizeObserver(() => setViewH(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const total = follower.lines.length;
  useEffect(() => {
    const el = box.current;
    if (follow && el) el.scrollTop = el.scrollHeight;
  }, [version, follow, total]);

  const first = Math.max(0, Math.floor(scrollTop / LINE_HEIGHT) - OVERSCAN);
  const last = Math.min(total, Math.ceil((scrollTop + viewH) / LINE_HEIGHT) + OVERSCAN);
  const rows = follower.lines.slice(first, last);
  const gutterWidth = String(total).length;

  return (
    <div className="log">
      <div className="log-head">
        <strong>{label}</strong>
        <span className="muted small" data-testid="log-count">
          {total.toLocaleString()} line{total === 1 ? '' : 's'}
          {live ? ' · live' : ''}
        </span>
        <span className="spacer" />
        <button
          type="button"
          className={`small${follow ? ' active' : ''}`}
          aria-pressed={follow}
          onClick={() => setFollow((f) => !f)}
        >
          {follow ? 'Following' : 'Follow'}
        </button>
      </div>
      {error && <ErrorBox error={error} what="reading the log" />}
      <div
        ref={box}
        className="log-body"
        tabIndex={0}
        role="log"
        aria-label={label}
        onScroll={(e) => {
          const el = e.currentTarget;
          setScrollTop(el.scrollTop);
          const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < LINE_HEIGHT * 2;
          if (!atBottom && follow) setFollow(false);
          else if (atBottom && !follow && live) setFollow(true);
        }}
      >
        <div style={{ height: total * LINE_HEIGHT, position: 'relative' }}>
          <div style={{ position: 'absolute', top: first * LINE_HEIGHT, left: 0, right: 0 }}>
            {rows.map((line, i) => (
              <div key={first + i} className="log-line" style={{ height: LINE_HEIGHT }}>
                <span className="ln" style={{ width: `${gutterWidth + 1}ch` }}>
                  {first + i + 1}
                </span>
                {line}
              </div>
            ))}
          </div>
        </div>
        {total === 0 && <div className="muted log-empty">(empty)</div>}
      </div>
    </div>
  );
};
