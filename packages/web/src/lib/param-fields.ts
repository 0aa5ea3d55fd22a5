/** One declared parameter of a DAG, as a field of the start dialog. */
export interface ParamField {
  /** `KEY`, or `1`, `2`, ... for a positional one. */
  readonly name: string;
  readonly value: string;
  readonly positional: boolean;
}

/**
 * The fields of the API's `dag.params` (`KEY=value`, positional ones as `1=value`; the server's
 * spec parser wrote them, so this only splits at the first `=`). A name cannot start with a
 * digit, so a numeric name is a position.
 */
export const paramFields = (params: readonly string[]): ParamField[] =>
  params.map((p) => {
    const eq = p.indexOf('=');
    const name = eq < 0 ? p : p.slice(0, eq);
    const value = eq < 0 ? '' : p.slice(eq + 1);
    return { name, value, positional: /^\d+$/.test(name) };
  });

const quote = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The `KEY="value" "positional"` text the start endpoint reads, in declaration order. */
export const paramsText = (fields: readonly ParamField[]): string =>
  fields.map((f) => (f.positional ? quote(f.value) : `${f.name}=${quote(f.value)}`)).join(' ');
