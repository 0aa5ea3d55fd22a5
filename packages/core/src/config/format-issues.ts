import type * as z from 'zod';
import { knownKeysAt } from './config.schema.js';

type Issue = z.ZodError['issues'][number];

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

/** `server.port`, `queues[0].name`, `worker.labels["a b"]`; the root is `(top level)`. */
export const displayPath = (at: readonly PropertyKey[]): string => {
  let out = '';
  for (const segment of at) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      out += IDENTIFIER.test(key) ? `${out === '' ? '' : '.'}${key}` : `[${JSON.stringify(key)}]`;
    }
  }
  return out === '' ? '(top level)' : out;
};

/** Dotted form used as a provenance key: `queues.0.name`. */
export const dottedPath = (at: readonly PropertyKey[]): string => at.map(String).join('.');

const valueAt = (root: unknown, at: readonly PropertyKey[]): unknown => {
  let node = root;
  for (const segment of at) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[segment];
  }
  return node;
};

/** Fields under an `auth` mapping whose values may be shown; every other one may hold a secret. */
const PLAIN_AUTH_FIELDS = new Set(['mode', 'name', 'role', 'username']);

/**
 * True when the value at `at` may be a password or token (anything under `auth` or a remote
 * node's `auth`, except names, roles and the mode): its value is never echoed in a message.
 */
export const isSecretPath = (at: readonly PropertyKey[]): boolean => {
  if (!at.includes('auth')) return false;
  const last = at[at.length - 1];
  return !(typeof last === 'string' && PLAIN_AUTH_FIELDS.has(last));
};

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** Edit distance, to suggest the key a typo meant. */
const distance = (a: string, b: string): number => {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
};

const unknownKeyHint = (at: readonly PropertyKey[], key: string): string => {
  const known = knownKeysAt(at) ?? [];
  const near = known.find((k) => distance(k.toLowerCase(), key.toLowerCase()) <= 2);
  const where = at.length === 0 ? 'the top level' : displayPath(at);
  const list = known.length > 0 ? ` (${where} accepts: ${known.join(', ')})` : '';
  return near === undefined
    ? `remove it or fix its spelling${list}`
    : `did you mean "${near}"?${list}`;
};

/**
 * Turns zod issues into one sentence each: where the value came from (`sourceOf`: the file, an
 * `SVC_*` variable or a flag), the config path, the offending value and the schema's hint.
 * `input` is the merged object that was parsed, so the value shown is what the user wrote.
 */
export const formatIssues = (
  issues: readonly Issue[],
  input: unknown,
  sourceOf: (at: readonly PropertyKey[]) => string,
): string[] =>
  issues.flatMap((issue): string[] => {
    const at = issue.path;
    const source = sourceOf(at);
    switch (issue.code) {
      case 'unrecognized_keys':
        return issue.keys.map(
          (key) =>
            `${source}: unknown key ${displayPath([...at, key])}: ${unknownKeyHint(at, key)}`,
        );
      case 'invalid_key': {
        // A record key (a worker label name); the key schema's own issue carries the hint.
        const hint = issue.issues[0]?.message ?? issue.message;
        return [`${source}: the name of ${displayPath(at)} is invalid: ${hint}`];
      }
      default: {
        const value = valueAt(input, at);
        if (value === undefined)
          return [`${source}: ${displayPath(at)} is missing: ${issue.message}`];
        const shown = isSecretPath(at) ? '(hidden)' : show(value);
        return [`${source}: ${displayPath(at)} = ${shown} is invalid: ${issue.message}`];
      }
    }
  });
