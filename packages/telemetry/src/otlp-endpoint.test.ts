import { describe, expect, it } from 'vitest';
import { toTracesUrl } from './otlp-endpoint.js';

describe('OTLP traces URL', () => {
  it.each([
    ['http://collector:4318', false, 'http://collector:4318/v1/traces'],
    ['http://collector:4318/', false, 'http://collector:4318/v1/traces'],
    ['https://otel.example.com/custom/path', false, 'https://otel.example.com/custom/path'],
    ['collector:4318', true, 'http://collector:4318/v1/traces'],
    ['collector:4318', false, 'https://collector:4318/v1/traces'],
  ])('%s (insecure %s) -> %s', (endpoint, insecure, url) => {
    expect(toTracesUrl(endpoint, insecure)).toEqual({ url });
  });

  it('names a non-HTTP scheme and the fix', () => {
    expect(toTracesUrl('grpc://collector:4317', false)).toEqual({
      problem:
        'otel.endpoint "grpc://collector:4317" uses grpc: Trellis exports over OTLP/HTTP, so use an http:// or https:// address (port 4318 by default)',
    });
  });

  it('names an endpoint that is no URL', () => {
    expect(toTracesUrl('http://exa mple:43x18', false)).toEqual({
      problem: expect.stringContaining('is not a URL: write the collector') as string,
    });
  });
});
