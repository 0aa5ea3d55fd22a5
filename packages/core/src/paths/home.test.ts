import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { expandHome, homeOf } from './home.js';

describe('expandHome', () => {
  it('expands ~ alone and a leading ~/', () => {
    expect(expandHome('~', '/home/ada')).toBe('/home/ada');
    expect(expandHome('~/', '/home/ada')).toBe('/home/ada');
    expect(expandHome('~/work/x', '/home/ada')).toBe('/home/ada/work/x');
  });

  it('leaves ~user, an inner ~ and plain paths unchanged', () => {
    expect(expandHome('~bob/x', '/home/ada')).toBe('~bob/x');
    expect(expandHome('a/~/b', '/home/ada')).toBe('a/~/b');
    expect(expandHome('/abs/path', '/home/ada')).toBe('/abs/path');
    expect(expandHome('rel', '/home/ada')).toBe('rel');
  });
});

describe('homeOf', () => {
  it('takes HOME of the environment', () => {
    expect(homeOf({ HOME: '/tmp/h' })).toBe('/tmp/h');
  });

  it("falls back to the OS user's home when HOME is missing or empty", () => {
    expect(homeOf({})).toBe(os.homedir());
    expect(homeOf({ HOME: '' })).toBe(os.homedir());
  });
});
