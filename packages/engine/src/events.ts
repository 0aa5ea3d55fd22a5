import { EventEmitter } from 'node:events';
import type { NodeStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';

/** Typed engine events (docs/architecture.md, "House style": `noun:verb`); tests await them instead of sleeping. */
export interface EngineEventMap {
  'run:started': [record: DagRunRecord];
  'node:statusChanged': [record: DagRunRecord, nodeName: string, status: NodeStatus];
  'run:finished': [record: DagRunRecord];
}

/** An EventEmitter whose `emit`/`on` are typed by {@link EngineEventMap}. */
export class EngineEvents extends EventEmitter<EngineEventMap> {
  /** Emits without letting a listener's exception reach the engine. */
  safeEmit<K extends keyof EngineEventMap>(event: K, ...args: EngineEventMap[K]): void {
    try {
      (this.emit as (e: K, ...a: EngineEventMap[K]) => boolean)(event, ...args);
    } catch {
      // a listener failed: the run goes on (docs/architecture.md, "House style", safeEmit)
    }
  }
}
