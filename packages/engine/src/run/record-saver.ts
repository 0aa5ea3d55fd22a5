import type { DagRunRecord } from '@trellis/spec';
import type { RunRecorder } from '../ports/recorder.js';

/**
 * Saves the run's record. Saves are coalesced: while one is being written, later changes mark the
 * record dirty and one more save follows with the latest state, so the store never falls behind
 * and the last save always holds the final state. A `persist` starts its save at the end of the
 * current event-loop turn (setImmediate), so the changes of one turn make one save: a step marked
 * running and then given its process id is saved once, not twice. A step's end comes in a later
 * turn (a process exit is an I/O event), so the running state is still handed to the store before
 * it.
 */
export class RecordSaver {
  private saving: Promise<void> | undefined;
  private dirty = false;

  constructor(
    private readonly record: DagRunRecord,
    private readonly recorder: RunRecorder,
    private readonly log: (line: string) => void,
  ) {}

  /** A new revision of the record, saved at the end of this event-loop turn. */
  persist(): void {
    this.#change(true);
  }

  /** A new revision of the record, resolved once it and every earlier one are saved. */
  async persistNow(): Promise<void> {
    this.#change(false);
    while (this.saving) await this.saving;
  }

  #change(soon: boolean): void {
    this.record.revision++;
    if (this.saving) {
      this.dirty = true;
      return;
    }
    this.saving = this.flush(soon);
  }

  private async flush(soon: boolean): Promise<void> {
    if (soon) await new Promise<void>((resolve) => setImmediate(resolve));
    do {
      this.dirty = false;
      try {
        // The recorder serialises the record during the call (RunRecorder.save), so no copy.
        await this.recorder.save(this.record);
      } catch (e) {
        this.log(`could not save the run record: ${(e as Error).message}`);
      }
    } while (this.dirty);
    this.saving = undefined;
  }
}
