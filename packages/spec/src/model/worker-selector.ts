/** Labels a worker carries, or a selector's required labels: name -> value. */
export type Labels = Readonly<Record<string, string>>;

/** Name of the dispatch queue for runs without a selector. */
export const ANY_QUEUE = 'any';

/**
 * The canonical form of a `workerSelector`, which names its dispatch queue (docs/architecture.md
 * section 3) and is how messages show a selector: `any` when empty, else `k=v` pairs sorted by
 * label name and joined by `,`, so equal selectors share one queue whatever order they were
 * written in.
 */
export const canonicalSelector = (selector: Labels): string => {
  const keys = Object.keys(selector).sort();
  if (keys.length === 0) return ANY_QUEUE;
  return keys.map((k) => `${k}=${selector[k] ?? ''}`).join(',');
};
