/**
 * A config that cannot be used: unreadable or invalid YAML, a schema violation, or a malformed
 * `SVC_*` variable or CLI flag. Fatal at boot (docs/architecture.md, "House style"), so it is a plain `Error`, not
 * an `AppError`: no request is being refused.
 *
 * Each problem names where the value came from (the file, the variable or the flag), the config
 * path, the offending value, and what to write instead.
 */
export class ConfigError extends Error {
  /** One sentence per problem; `message` is the single problem or a list of all of them. */
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[], options?: ErrorOptions) {
    const list = typeof problems === 'string' ? [problems] : [...problems];
    super(
      list.length === 1
        ? (list[0] ?? '')
        : `${list.length} config problems:\n  - ${list.join('\n  - ')}`,
      options,
    );
    this.name = 'ConfigError';
    this.problems = list;
  }
}
