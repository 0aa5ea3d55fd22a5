import { describe, expect, it } from 'vitest';
import { canonicalSelector, matchesSelector, parseLabels, selectorOfQueue } from './selector.js';

describe('worker selector', () => {
  it('names the queue of an empty selector "any"', () => {
    expect(canonicalSelector({})).toBe('any');
  });

  it('sorts labels so equal selectors share one queue', () => {
    expect(canonicalSelector({ region: 'eu', gpu: 'true' })).toBe('gpu=true,region=eu');
    expect(canonicalSelector({ gpu: 'true', region: 'eu' })).toBe('gpu=true,region=eu');
  });

  it('reads a queue name back into its selector', () => {
    expect(selectorOfQueue('gpu=true,region=eu')).toEqual({ gpu: 'true', region: 'eu' });
    expect(selectorOfQueue('any')).toEqual({});
    expect(selectorOfQueue('url=a=b')).toEqual({ url: 'a=b' });
  });

  it('matches when every selector label is present with an equal value', () => {
    const labels = { gpu: 'true', region: 'eu' };
    expect(matchesSelector(labels, {})).toBe(true);
    expect(matchesSelector(labels, { gpu: 'true' })).toBe(true);
    expect(matchesSelector(labels, { gpu: 'true', region: 'eu' })).toBe(true);
    expect(matchesSelector(labels, { gpu: 'false' })).toBe(false);
    expect(matchesSelector(labels, { zone: 'a' })).toBe(false);
  });

  it('compares names and values case-sensitively', () => {
    expect(matchesSelector({ gpu: 'true' }, { gpu: 'True' })).toBe(false);
    expect(matchesSelector({ gpu: 'true' }, { GPU: 'true' })).toBe(false);
  });

  it('does not take inherited properties for labels', () => {
    expect(matchesSelector({}, { toString: 'x' })).toBe(false);
  });

  it('parses --labels and names a bad pair with the fix', () => {
    expect(parseLabels('gpu=true, region=eu')).toEqual({ gpu: 'true', region: 'eu' });
    expect(parseLabels('')).toEqual({});
    expect(parseLabels('gpu')).toMatch(/invalid label "gpu": use name=value pairs/);
  });
});
