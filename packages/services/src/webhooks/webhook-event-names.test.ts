import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_NAMES } from '@trellis/core';
import { RUN_EVENT_NOUNS, RUN_EVENT_TYPES } from '../events/run-events.js';

describe('webhook event names in the config schema', () => {
  it('are the event stream types and nouns, no more, no less', () => {
    expect([...WEBHOOK_EVENT_NAMES].sort()).toEqual(
      [...RUN_EVENT_NOUNS, ...RUN_EVENT_TYPES].sort(),
    );
  });
});
