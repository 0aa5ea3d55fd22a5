/**
 * Runs `stages` (module imports) one after another with a turn of the event loop after each, and
 * resolves with what `last` resolves with. Node evaluates an imported module graph in one
 * synchronous run: loading a large graph in stages lets the I/O that comes meanwhile (a
 * `GET /health` while the server's app loads) wait for one stage, not for the whole graph.
 */
export const importInStages = async <T>(
  stages: readonly (() => Promise<unknown>)[],
  last: () => Promise<T>,
): Promise<T> => {
  for (const stage of stages) {
    await stage();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return last();
};
