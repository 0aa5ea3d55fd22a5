import { randomBytes } from 'node:crypto';

/** Produces run ids. Tests inject a sequential generator so snapshots stay stable. */
export interface IdGenerator {
  newRunId(): string;
}

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond timestamp, version 7, 74 random bits. Ids sort by
 * creation time, which keeps run listings and directory names in order.
 */
export const uuidv7 = (nowMs: number): string => {
  const bytes = randomBytes(16);
  let ts = BigInt(nowMs);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = Number(ts & 0xffn);
    ts >>= 8n;
  }
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The production generator: UUIDv7 from the given clock. */
export const uuidv7Generator = (now: () => number): IdGenerator => ({
  newRunId: () => uuidv7(now()),
});

/** Deterministic ids `run-0001`, `run-0002`, ... for tests. */
export const sequentialIdGenerator = (prefix = 'run-'): IdGenerator => {
  let n = 0;
  return { newRunId: () => `${prefix}${String(++n).padStart(4, '0')}` };
};

/** Run ids accepted from users: letters, digits, `-` and `_`, at most 64 characters. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
