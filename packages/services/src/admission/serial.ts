/** Runs `f` after the previous call with the same key in `chains` ended (one at a time per key). */
export const serial = <T>(
  chains: Map<string, Promise<unknown>>,
  key: string,
  f: () => Promise<T>,
): Promise<T> => {
  const prev = chains.get(key) ?? Promise.resolve();
  const next = prev.then(f, f);
  const tail = next.then(
    () => undefined,
    () => undefined,
  );
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return next;
};
