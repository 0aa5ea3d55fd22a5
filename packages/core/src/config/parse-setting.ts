import { ConfigError } from './config-error.js';

/**
 * How the text of an `SVC_*` variable or a CLI flag becomes a config value.
 * - `string`, `path`: taken as is (`path` values then get `~` expanded and are made absolute);
 * - `int`: digits only; range is checked by the schema;
 * - `port`: an integer from 1 to 65535;
 * - `bool`: `true`, `false`, `1` or `0`;
 * - `labels`: `key=value` pairs separated by commas;
 * - `list`: values separated by commas (spaces trimmed, empty ones skipped).
 */
export type SettingKind =
  'string' | 'path' | 'int' | 'port' | 'listenPort' | 'bool' | 'labels' | 'list';

/** A value as a variable or flag gives it: env values are always text, flags may be typed. */
export type RawSetting = string | number | boolean | Readonly<Record<string, string>>;

/** A converted value, ready to be placed at its config path. */
export type SettingValue = string | number | boolean | Record<string, string> | string[];

const LABELS_HINT = 'use key=value pairs separated by commas, e.g. gpu=true,region=eu';

/** `SVC_PORT="abc"` for text, `--port=70000` for typed flag values. */
const shown = (source: string, raw: RawSetting): string =>
  `${source}=${typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : JSON.stringify(raw)}`;

const fail = (source: string, raw: RawSetting, what: string, hint: string): never => {
  throw new ConfigError(`${shown(source, raw)} ${what}: ${hint}`);
};

const toInteger = (raw: RawSetting): number | undefined => {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : undefined;
  if (typeof raw === 'string' && /^[0-9]+$/.test(raw)) {
    const n = Number(raw);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
};

/** Result of {@link parseLabels}: the labels, or why the text is not a label list. */
export type ParsedLabels =
  { ok: true; labels: Record<string, string> } | { ok: false; problem: string };

/**
 * Parses `k=v,k2=v2` (spaces around names and values are trimmed, empty pairs skipped). Not ok
 * for a pair without `=`, an empty name or value, or a name given twice.
 */
export const parseLabels = (text: string): ParsedLabels => {
  const labels = new Map<string, string>();
  for (const pair of text.split(',').map((p) => p.trim())) {
    if (pair === '') continue; // tolerate "a=1," and "a=1,,b=2"
    const eq = pair.indexOf('=');
    if (eq === -1) return { ok: false, problem: `${JSON.stringify(pair)} has no "="` };
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (key === '')
      return { ok: false, problem: `${JSON.stringify(pair)} has an empty label name` };
    if (value === '') return { ok: false, problem: `${JSON.stringify(pair)} has an empty value` };
    if (labels.has(key))
      return { ok: false, problem: `label ${JSON.stringify(key)} is given twice` };
    labels.set(key, value);
  }
  // fromEntries defines own properties, so a label named "__proto__" stays a plain label.
  return { ok: true, labels: Object.fromEntries(labels) };
};

/**
 * A `string` or `path` setting's text. `source` names it in errors (`SVC_HOME`, `--home`).
 * @throws ConfigError when a flag arrived as a number, boolean or record.
 */
export const parseSettingText = (raw: RawSetting, source: string): string =>
  typeof raw === 'string' ? raw : fail(source, raw, 'is not text', 'pass a single value');

/**
 * Converts one variable or flag value to the type its config field needs. `source` names it in
 * errors (`SVC_PORT`, `--port`).
 * @throws ConfigError naming the source and the value, with the accepted form.
 */
export const parseSetting = (kind: SettingKind, raw: RawSetting, source: string): SettingValue => {
  switch (kind) {
    case 'string':
    case 'path':
      return parseSettingText(raw, source);
    case 'int': {
      const n = toInteger(raw);
      return n ?? fail(source, raw, 'is not an integer', 'use a whole number in digits, e.g. 30');
    }
    case 'port': {
      const n = toInteger(raw);
      if (n === undefined || n < 1 || n > 65_535) {
        return fail(source, raw, 'is not a port number', 'use an integer from 1 to 65535');
      }
      return n;
    }
    case 'listenPort': {
      const n = toInteger(raw);
      if (n === undefined || n < 0 || n > 65_535) {
        return fail(
          source,
          raw,
          'is not a port number',
          'use an integer from 1 to 65535, or 0 for any free port',
        );
      }
      return n;
    }
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 1) return true;
      if (raw === 'false' || raw === '0' || raw === 0) return false;
      return fail(source, raw, 'is not a boolean', 'use true, false, 1 or 0');
    case 'list':
      return parseSettingText(raw, source)
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
    case 'labels': {
      if (typeof raw === 'object') return { ...raw };
      if (typeof raw !== 'string') return fail(source, raw, 'is not a list of labels', LABELS_HINT);
      const parsed = parseLabels(raw);
      return parsed.ok
        ? parsed.labels
        : fail(source, raw, `is not a list of labels (${parsed.problem})`, LABELS_HINT);
    }
  }
};
