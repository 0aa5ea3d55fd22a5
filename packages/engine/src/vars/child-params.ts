import { tokenizeParams, toDefaultParamsString, type Param } from '@trellis/spec';

/** A name the child can receive as a named parameter. */
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A JSON value as parameter text: strings as they are, null as empty, scalars plainly. */
const valueText = (v: unknown): string =>
  typeof v === 'string' ? v : v === null ? '' : JSON.stringify(v);

/** A value the `KEY=value` form reads back unquoted as the same single value. */
const BARE = /^[^\s"'`\\]+$/;
/** A positional value that, unquoted, would read as a named param. */
const LOOKS_NAMED = /^[A-Za-z_][A-Za-z0-9_]*=/;

const quoted = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * A child-DAG step's `params:` text with each value expanded on its own: the text is cut into
 * `KEY=value` and positional tokens as written, then every value is expanded and written back
 * quoted when it needs it, so a value with blanks or quotes stays one value, byte for byte
 * (`FILE=${ITEM}` with ITEM `a "b"` gives `FILE="a \"b\""`, not `FILE=a` and a positional).
 */
export const expandChildParams = async (
  text: string,
  expand: (value: string) => Promise<string>,
): Promise<string> => {
  const out: string[] = [];
  for (const t of tokenizeParams(text)) {
    const v = await expand(t.value);
    const bare = BARE.test(v) && (t.name !== undefined || !LOOKS_NAMED.test(v));
    out.push(`${t.name === undefined ? '' : `${t.name}=`}${bare ? v : quoted(v)}`);
  }
  return out.join(' ');
};

/**
 * The child params of a parallel item that is a JSON object (`{"REGION":"us-west-2"}`, as a
 * mapping item or an object of a `${VAR}` list becomes): each key a named param, in the
 * `KEY="value"` form the child reads back byte for byte (docs/decisions.md, "Parallel object
 * items"). Undefined for any other item; a problem sentence when a key is not a parameter name.
 */
export const objectItemParams = (item: string): string | undefined | { problem: string } => {
  const text = item.trim();
  if (!text.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined; // text that merely starts with "{" is a plain item
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const params: Param[] = [];
  for (const [name, v] of Object.entries(parsed)) {
    if (!PARAM_NAME.test(name))
      return {
        problem: `parallel item ${text} has the key ${JSON.stringify(name)}, which cannot be a parameter name of the child DAG: use letters, digits and "_", not starting with a digit`,
      };
    params.push({ name, value: valueText(v), positional: false });
  }
  return toDefaultParamsString(params);
};
