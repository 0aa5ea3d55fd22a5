import { describe, expect, it } from 'vitest';
import { toSafeName } from './safe-name.js';

describe('toSafeName', () => {
  it('keeps a name made of letters, digits, "_", "." and "-" unchanged', () => {
    expect(toSafeName('build_step-1.v2')).toBe('build_step-1.v2');
  });

  it('replaces other characters with "_" and adds a short hash suffix', () => {
    expect(toSafeName('step 1/a')).toMatch(/^step_1_a-[0-9a-f]{8}$/);
  });

  it('gives two names that differ only in replaced characters different results', () => {
    expect(toSafeName('a b')).not.toBe(toSafeName('a/b'));
    expect(toSafeName('a b')).not.toBe(toSafeName('a_b'));
  });

  it('hashes a name that already looks hashed, so it cannot collide with a replaced one', () => {
    const hashed = toSafeName('a b');
    expect(toSafeName(hashed)).not.toBe(hashed);
  });

  it('never returns an empty, "." or ".." path segment', () => {
    for (const n of ['', '.', '..']) expect(toSafeName(n)).toMatch(/^[._]+-[0-9a-f]{8}$/);
  });

  it('truncates a long name to 100 characters plus the hash suffix', () => {
    const safe = toSafeName('x'.repeat(300));
    expect(safe).toHaveLength(109);
    expect(toSafeName('x'.repeat(300))).not.toBe(toSafeName('x'.repeat(301)));
  });
});
