/**
 * A copy of the process environment, without unset entries. This is the one place in the repo
 * that reads `process.env` (docs/architecture.md, "House style"): the CLI composition root passes the result to
 * `loadConfig({ env })`, and everything else receives config slices.
 */
export const readProcessEnv = (): Record<string, string> => {
  const env: Record<string, string> = {};
  // eslint-disable-next-line no-restricted-properties -- the one reader of process.env (docs/architecture.md, "House style")
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[name] = value;
  }
  return env;
};
