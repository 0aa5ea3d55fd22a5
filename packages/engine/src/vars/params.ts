import { tokenizeParams, type Param, type ParamToken } from '@trellis/spec';

/** A name the string form and the JSON form both accept for a named parameter. */
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A key such as `"2"`: the value of the second positional parameter. */
const POSITION = /^[1-9][0-9]*$/;

/** A JSON value as parameter text: strings as they are, scalars plainly, the rest as JSON. */
const valueText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * Reads params given at start time (API `params`, CLI `-- ...`), in any of the forms
 * docs/decisions.md accepts:
 * - JSON object text, `{"A":"1","B":2}`: named tokens, in order; numbers and booleans as text,
 *   arrays and objects as JSON; a key such as `"1"` is the first positional parameter (it is
 *   returned as a token named `"1"`, which {@link applyParamOverrides} understands);
 * - a JSON array, `["a","b"]`: positional tokens;
 * - the string form, `A=1 B="x y" positional` (spec `params`).
 *
 * Returns the tokens, or a problem sentence when the text starts with `{` but is not a valid
 * JSON object, or a key is not a parameter name. Text starting with `[` that is not JSON is read
 * in the string form.
 */
export const parseParamsInput = (text: string): ParamToken[] | string => {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return `params start with "{" but are not valid JSON (${why}): give a JSON object such as {"A":"1"} or the form A=1 B="x y"`;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return 'params must be a JSON object such as {"A":"1"}';
    const tokens: ParamToken[] = [];
    for (const [name, v] of Object.entries(parsed)) {
      if (!PARAM_NAME.test(name) && !POSITION.test(name))
        return `invalid parameter name ${JSON.stringify(name)}: use letters, digits and "_", not starting with a digit, or a position such as "1"`;
      tokens.push({ name, value: valueText(v) });
    }
    return tokens;
  }
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed.map((v) => ({ value: valueText(v) }));
    } catch {
      // Not JSON: `[a` is a plain positional value of the string form.
    }
  }
  return tokenizeParams(trimmed);
};

/**
 * Applies start-time overrides to a DAG's default params (as the peer does):
 * - a named override replaces the parameter of that name, or is appended;
 * - the Nth positional override replaces the Nth positional parameter, or is appended;
 * - an override named by a position (`"2"`, from JSON) replaces that positional parameter, or is
 *   appended as the next positional one.
 *
 * Order is kept; appended positional parameters are numbered after the existing ones, so the
 * names stay `1`, `2`, ... without gaps.
 */
export const applyParamOverrides = (
  defaults: readonly Param[],
  overrides: readonly ParamToken[],
): Param[] => {
  const out: Param[] = [...defaults];
  /** Index in `out` of the nth (1-based) positional parameter, or -1. */
  const positionalAt = (n: number): number => {
    let seen = 0;
    return out.findIndex((p) => p.positional && ++seen === n);
  };
  const setPositional = (n: number, value: string): void => {
    const at = positionalAt(n);
    if (at >= 0) out[at] = { ...(out[at] as Param), value };
    else {
      const count = out.filter((p) => p.positional).length;
      out.push({ name: String(count + 1), value, positional: true });
    }
  };
  let position = 0;
  for (const o of overrides) {
    if (o.name === undefined) setPositional(++position, o.value);
    else if (POSITION.test(o.name)) setPositional(Number(o.name), o.value);
    else {
      const at = out.findIndex((p) => !p.positional && p.name === o.name);
      const param: Param = { name: o.name, value: o.value, positional: false };
      if (at >= 0) out[at] = param;
      else out.push(param);
    }
  }
  return out;
};

/**
 * The run's `params` field: JSON object text such as `{"NAME":"x","1":"positional"}`, in the
 * params' order (docs/decisions.md). Written by hand because a JavaScript object would
 * move integer-like keys (`"1"`) to the front. A repeated name keeps its first place and its
 * last value, as a JSON reader would see it. {@link parseParamsInput} reads the text back.
 */
export const paramsToJsonText = (params: readonly Param[]): string => {
  const values = new Map<string, string>();
  for (const p of params) values.set(p.name, p.value);
  const fields = [...values].map(
    ([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`,
  );
  return `{${fields.join(',')}}`;
};
