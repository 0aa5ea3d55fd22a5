import { constants } from 'node:os';

const KNOWN = new Set(Object.keys(constants.signals));

/**
 * A signal name as `SIGTERM`; accepts `TERM` and lower case. Undefined when unknown.
 */
export const normalizeSignal = (name: string): string | undefined => {
  const upper = name.trim().toUpperCase();
  const full = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  return KNOWN.has(full) ? full : undefined;
};
