import { type UIEvent, useEffect, useRef, useState } from 'react';
import type { ReadLogWindow } from '../lib/log-follower';
import { useFollowedLog } from '../lib/use-followed-log';
import { ErrorBox } from './error-box';

const LINE_HEIGHT = 18;
const OVERSCAN = 30;

/**
 * The scroll box of a log of `total` lines: which rows are on screen (plus some either side), and
 * follow mode, which sticks to the bottom as `version` brings new lines until the reader scrolls up.
 */
const useLogViewport = (total: number, version: number, live: boolean) => {
  const [follow, setFollow] = useState(true);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewH, setViewH] = useState(400);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    setViewH(el.clientHeight);
    const ro = new ResizeObserver(() => setViewH(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const el = box.current;
    if (follow && el) el.scrollTop = el.scrollHeight;
  }, [version, follow, total]);

  const onScroll = (e: UIEvent<HTMLDivElement>) => {
    const el = e.currentTarget;
    setScrollTop(el.scrollTop);
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < LINE_HEIGHT * 2;
    if (!atBottom && follow) setFollow(false);
    else if (atBottom && !follow && live) setFollow(true);
  };

  const first = Math.max(0, Math.floor(scrollTop / LINE_HEIGHT) - OVERSCAN);
  const last = Math.min(total, Math.ceil((scrollTop + viewH) / LINE_HEIGHT) + OVERSCAN);
  return { box, follow, setFollow, onScroll, first, last };
};

const LogHead = ({
  label,
  total,
  live,
  follow,
  onToggleFollow,
}: {
  label: string;
  total: number;
  live: boolean;
  follow: boolean;
  onToggleFollow: () => void;
}) => (
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
      onClick={onToggleFollow}
    >
      {follow ? 'Following' : 'Follow'}
    </button>
  </div>
);

/** The rows on screen, placed inside a spacer as tall as the whole log. */
const LogRows = ({
  rows,
  first,
  total,
}: {
  rows: readonly string[];
  first: number;
  total: number;
}) => {
  const gutterWidth = String(total).length;
  return (
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
  );
};

/**
 * A log with follow mode: the LogFollower reads new lines while `live` (the run is running) and
 * the view draws only the rows on screen, so a 200,000-line log scrolls as smoothly as a short
 * one. Following sticks to the bottom; scrolling up stops following, "Follow" resumes.
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
  const { follower, version, error } = useFollowedLog(read, live, sourceKey);
  const total = follower.lines.length;
  const view = useLogViewport(total, version, live);
  const rows = follower.lines.slice(view.first, view.last);

  return (
    <div className="log">
      <LogHead
        label={label}
        total={total}
        live={live}
        follow={view.follow}
        onToggleFollow={() => view.setFollow((f) => !f)}
      />
      {error && <ErrorBox error={error} what="reading the log" />}
      <div
        ref={view.box}
        className="log-body"
        tabIndex={0}
        role="log"
        aria-label={label}
        onScroll={view.onScroll}
      >
        <LogRows rows={rows} first={view.first} total={total} />
        {total === 0 && <div className="muted log-empty">(empty)</div>}
      </div>
    </div>
  );
};
