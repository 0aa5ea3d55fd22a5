import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEMP_PREFIX, tempPathFor } from './atomic-write.js';

describe('tempPathFor', () => {
  it('names a dot-file beside the path from the pid and a counter, no two alike', () => {
    const path = join('/data', 'runs', 'etl', 'run-1', 'status.json');
    const names = Array.from({ length: 3 }, () => tempPathFor(path));
    const prefix = join(
      '/data',
      'runs',
      'etl',
      'run-1',
      `${TEMP_PREFIX}status.json.${process.pid}.`,
    );
    const counts = names.map((n) => {
      expect(n.startsWith(prefix)).toBe(true);
      return parseInt(n.slice(prefix.length), 16);
    });
    // a counter (no random bytes per save, issue 21); it wraps at 2^32
    expect(counts.slice(1)).toEqual(counts.slice(0, 2).map((c) => (c + 1) % 2 ** 32));
  });
});
