/*
 * The first page's data, asked for while the app's script is still starting (main.tsx), beside
 * the session check instead of after it: the API client takes that answer once, for the same URL
 * and credentials, if it is asked within a few seconds (else it fetches as usual).
 */

interface Early {
  readonly key: string;
  readonly at: number;
  readonly res: Promise<Response>;
}

/** Older than this, an unclaimed answer is not used (the page asks again). */
const FRESH_MS = 5000;

let early: Early | undefined;

const keyOf = (url: string, authorization: string | undefined): string =>
  `${authorization ?? ''}\n${url}`;

/** Starts `GET url` with the API client's headers (`authorization` as it will send it). */
export const prefetchGet = (url: string, authorization: string | undefined, cookies: boolean) => {
  const res = fetch(url, {
    headers: {
      Accept: 'application/json',
      ...(authorization ? { Authorization: authorization } : {}),
    },
    credentials: cookies ? 'same-origin' : 'omit',
  });
  res.catch(() => undefined); // unclaimed, a failure is nobody's; claimed, the client reports it
  early = { key: keyOf(url, authorization), at: performance.now(), res };
};

/** The prefetched answer of `GET url` with these credentials, once; else undefined. */
export const takePrefetched = (
  url: string,
  authorization: string | undefined,
): Promise<Response> | undefined => {
  const e = early;
  if (!e || e.key !== keyOf(url, authorization) || performance.now() - e.at > FRESH_MS)
    return undefined;
  early = undefined;
  return e.res;
};
