import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TEMP_PREFIX, tempPathFor, writeFileAtomic } from './atomic-write.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('an atomic write whose temporary name is taken', () => {
  it('fails with EEXIST and leaves the other writer’s temporary file alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-atomic-'));
    dirs.push(dir);
    const path = join(dir, 'status.json');
    // the name the next write will take: this process's pid and the counter's next value
    const prefix = join(dir, `${TEMP_PREFIX}status.json.${process.pid}.`);
    const last = parseInt(tempPathFor(path).slice(prefix.length), 16);
    const next = `${prefix}${((last + 1) % 2 ** 32).toString(16)}`;
    writeFileSync(next, 'the winner, half written');

    await expect(writeFileAtomic(path, 'the loser')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(next, 'utf8')).toBe('the winner, half written');
    // the next write takes the next name and succeeds
    await writeFileAtomic(path, 'saved');
    expect(readFileSync(path, 'utf8')).toBe('saved');
  });
});
