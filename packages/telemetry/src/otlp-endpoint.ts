/** The OTLP/HTTP path of the traces signal. */
export const TRACES_PATH = '/v1/traces';

/**
 * The URL the exporter posts spans to, from the DAG's `otel.endpoint`:
 * - `collector:4318` (no scheme) gets `http://` when `insecure` is true, else `https://`
 *   (OTLP exporters' convention for a bare host:port);
 * - an endpoint with no path (or `/`) gets `/v1/traces`; one with a path is used as written.
 *
 * Returns a problem sentence (naming the value and the fix) instead of a URL when the endpoint
 * cannot be one.
 */
export const toTracesUrl = (
  endpoint: string,
  insecure: boolean,
): { url: string } | { problem: string } => {
  const raw = endpoint.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw)
    ? raw
    : `${insecure ? 'http' : 'https'}://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return {
      problem: `otel.endpoint ${JSON.stringify(endpoint)} is not a URL: write the collector's OTLP/HTTP address, e.g. http://localhost:4318`,
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      problem: `otel.endpoint ${JSON.stringify(endpoint)} uses ${url.protocol.slice(0, -1)}: Trellis exports over OTLP/HTTP, so use an http:// or https:// address (port 4318 by default)`,
    };
  }
  if (url.pathname === '' || url.pathname === '/') url.pathname = TRACES_PATH;
  return { url: url.toString() };
};
