import type { RunRef } from '@trellis/spec';
import type { RunRefMsg } from '../wire/messages.js';

/** A run reference from the wire; undefined when absent or either field is empty. */
export const refOf = (m: RunRefMsg | null | undefined): RunRef | undefined =>
  m && m.name !== '' && m.dagRunId !== '' ? { name: m.name, dagRunId: m.dagRunId } : undefined;

/** A run reference for the wire. */
export const toMsg = (r: RunRef): RunRefMsg => ({ name: r.name, dagRunId: r.dagRunId });
