/** The http step's `command`: `<METHOD> <URL>` (spec: Executors). */
export interface HttpCommand {
  readonly method: string;
  readonly url: URL;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/**
 * Parses `<METHOD> <URL>` (after variable expansion) and adds `query` to the URL's own query.
 * Returns a problem sentence instead of throwing.
 */
export const parseHttpCommand = (
  text: string,
  query: Readonly<Record<string, string>>,
): HttpCommand | { problem: string } => {
  const parts = text.trim().split(/\s+/);
  const [method = '', rawUrl = '', ...rest] = parts;
  if (!METHODS.includes(method.toUpperCase()) || rawUrl === '' || rest.length > 0)
    return {
      problem: `http command must be "<METHOD> <URL>" with METHOD one of ${METHODS.join(', ')}, got "${text.trim()}"`,
    };
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return {
      problem: `http command has an invalid URL "${rawUrl}": write it as http(s)://host/path`,
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { problem: `http URL "${rawUrl}" must start with http:// or https://` };
  for (const [k, v] of Object.entries(query)) url.searchParams.append(k, v);
  return { method: method.toUpperCase(), url };
};
