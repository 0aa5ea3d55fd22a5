/** A W3C trace context (`traceparent` header, `TRACEPARENT` variable), version 00. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** The `sampled` flag: the caller records this trace. */
  readonly sampled: boolean;
}

const PATTERN = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZERO = /^0+$/;

/**
 * Parses `00-<traceId>-<spanId>-<flags>` (W3C Trace Context). Returns undefined for anything
 * else (version `ff`, all-zero ids, wrong lengths): an unusable context starts a new trace.
 */
export const parseTraceparent = (text: string | undefined): TraceParent | undefined => {
  const m = PATTERN.exec((text ?? '').trim().toLowerCase());
  if (!m) return undefined;
  const [, version = '', traceId = '', spanId = '', flags = '00'] = m;
  if (version === 'ff' || (version === '00' && m[0].length !== 55)) return undefined;
  if (ZERO.test(traceId) || ZERO.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
};

/** The `traceparent` text of a context. */
export const formatTraceparent = (p: TraceParent): string =>
  `00-${p.traceId}-${p.spanId}-${p.sampled ? '01' : '00'}`;
