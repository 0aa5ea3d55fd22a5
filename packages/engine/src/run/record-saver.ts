import type { DagRunRecord } from '@trellis/spec';
import type { RunRecorder } from '../ports/recorder.js';

/**
 * Saves the run's record. Saves are coalesced: while one is being written, later changes mark the
 * record dirty and one more save follows with the latest state, so the store never falls behind
 * and the last save always holds the final state.
 */
export class RecordSaver {
  private saving: Promise<void> | undefined;
  private dirty = false;

  constructor(
    private readonly record: DagRunRecord,
    private readonly recorder: RunRecorder,
    private readonly log: (line: string) => void,
  ) {}

  /** A new revision of the record, saved soon. */
  persist(): void {
    this.record.revision++;
    if (this.saving) {
      this.dirty = true;
      return;
    }
    this.saving = this.flush();
  }

  /** A new revision of the record, resolved once it and every earlier one are saved. */
  async persistNow(): Promise<void> {
    this.persist();
    while (this.saving) await this.saving;
  }

  private async flush(): Promise<void> {
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
