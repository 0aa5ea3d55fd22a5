import { hostname } from 'node:os';
import type { RunOwner } from '@trellis/spec';
import { isOwnerAlive } from './process-owner.js';

/**
 * True when a running run's owner is known to be gone, so nobody will ever finish the run
 * (issue 3, item 5: owner liveness, not guesswork). Only owners this process can judge count:
 * a local process on this host. A run owned by a remote worker is the coordinator's to judge
 * (lost-worker rule) and a local owner on another host sharing the store cannot be checked, so
 * both are never orphaned here. A running record without an owner has nobody to finish it.
 */
export const isOrphanedOwner = (owner: RunOwner | undefined): boolean => {
  if (owner === undefined) return true;
  if (owner.workerId !== 'local' || owner.host !== hostname()) return false;
  return !isOwnerAlive(owner);
};
