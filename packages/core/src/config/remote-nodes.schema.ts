import * as z from 'zod';
import { boolean, checkUniqueNames, intAtLeast, section, text } from './schema-helpers.js';

/*
 * `remoteNodes` of config.yaml: other Trellis servers that requests with `remoteNode=<name>` are
 * forwarded to (spec: Endpoints, `remoteNode`). Unlike `auth`, the credentials stay in clear:
 * they are sent to the remote node.
 */

/** Credentials sent to a remote node, replacing the caller's `Authorization` header. */
export type RemoteNodeAuth = { basic: { username: string; password: string } } | { token: string };

/** One remote node. */
export interface RemoteNodeConfig {
  /** The value of `remoteNode` that selects it; unique, never `local`. */
  name: string;
  /** Absolute http(s) URL of its API, ending in `/api/v2` (no trailing slash, no credentials). */
  apiBaseURL: string;
  /** Credentials for it; absent = none sent. */
  auth?: RemoteNodeAuth;
  /** Accept any TLS certificate (self-signed, wrong host). @default `false` */
  skipTLSVerify: boolean;
  /** How long a forwarded request may take, in seconds. @default `30` */
  timeoutSec: number;
}

const URL_HINT =
  'use an absolute http(s) URL ending in /api/v2, e.g. https://prod.example.com/api/v2';

/** Why `url` cannot be an apiBaseURL, or `undefined` when it can. */
const apiBaseUrlProblem = (url: string): string | undefined => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return URL_HINT;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return URL_HINT;
  if (parsed.username !== '' || parsed.password !== '') {
    return 'remove the user name and password from the URL and put them under auth.basic';
  }
  if (parsed.search !== '' || parsed.hash !== '') return `${URL_HINT}, without "?" or "#"`;
  if (!parsed.pathname.replace(/\/+$/, '').endsWith('/api/v2')) return URL_HINT;
  return undefined;
};

const remoteAuthShape = {
  /** HTTP Basic credentials. */
  basic: section({
    username: text('the user name on the remote node'),
    password: text('the password on the remote node'),
  }).optional(),
  /** A Bearer token. */
  token: text('a non-empty token string').optional(),
};

const RemoteAuthSchema = section(remoteAuthShape)
  .superRefine((a, ctx) => {
    if ((a.basic === undefined) === (a.token === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message:
          a.basic === undefined
            ? 'give basic (username, password) or token'
            : 'give either basic or token, not both',
      });
    }
  })
  // The refinement above guarantees exactly one of the two.
  .transform((a): RemoteNodeAuth => (a.basic ? { basic: a.basic } : { token: a.token ?? '' }));

/** The keys of one `remoteNodes` entry. */
export const remoteNodeShape = {
  /** The value of `remoteNode` that selects this node; unique, not `local`. */
  name: text('a node name, e.g. prod').refine((n) => n !== 'local', {
    error: 'use another name: "local" means this server',
  }),
  /** Its API, `https://host[:port]/api/v2`. A trailing slash is dropped. */
  apiBaseURL: z
    .string({ error: URL_HINT })
    .superRefine((url, ctx) => {
      const problem = apiBaseUrlProblem(url);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .overwrite((url) => url.replace(/\/+$/, '')),
  /** Credentials for it (basic or token). @default none */
  auth: RemoteAuthSchema.optional(),
  /** Accept any TLS certificate. @default `false` */
  skipTLSVerify: boolean().default(false),
  /** Seconds a forwarded request may take. @default `30` */
  timeoutSec: intAtLeast(1, 30).default(30),
};

/** Keys of the mappings inside `remoteNodes`, for "did you mean" hints. */
export const REMOTE_NODE_SUBKEYS = {
  'remoteNodes.[]': Object.keys(remoteNodeShape),
  'remoteNodes.[].auth': Object.keys(remoteAuthShape),
  'remoteNodes.[].auth.basic': ['username', 'password'],
} as const;

/** `remoteNodes`: a list with unique names. */
export const RemoteNodesSchema = z
  .array(
    section(remoteNodeShape).transform((n): RemoteNodeConfig => ({
      name: n.name,
      apiBaseURL: n.apiBaseURL,
      ...(n.auth ? { auth: n.auth } : {}),
      skipTLSVerify: n.skipTLSVerify,
      timeoutSec: n.timeoutSec,
    })),
    { error: 'use a list of nodes, e.g. - name: prod' },
  )
  .superRefine((nodes, ctx) => checkUniqueNames(nodes, ctx, 'remote node'));
