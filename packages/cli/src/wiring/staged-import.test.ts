import { describe, expect, it } from 'vitest';
import { importInStages } from './staged-import.js';

describe('importInStages', () => {
  it('lets the event loop turn after each stage: I/O that came meanwhile runs before the next', async () => {
    const seen: string[] = [];
    const stage = (name: string) => (): Promise<void> => {
      seen.push(name);
      // what arrives while this stage evaluates (a request): handled before the next stage
      setImmediate(() => seen.push(`after ${name}`));
      return Promise.resolve();
    };
    const result = await importInStages([stage('a'), stage('b')], () => {
      seen.push('last');
      return Promise.resolve(42);
    });
    expect(result).toBe(42);
    expect(seen).toEqual(['a', 'after a', 'b', 'after b', 'last']);
  });
});
