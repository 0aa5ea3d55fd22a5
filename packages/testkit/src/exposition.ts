/** One metric family of a Prometheus text exposition. */
export interface MetricFamily {
  help?: string;
  type?: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/**
 * A small parser of the Prometheus text exposition format (enough for tests): families by name,
 * with their HELP, TYPE and samples; a histogram's `_bucket`, `_sum` and `_count` samples belong
 * to its family. Throws on a line that is neither.
 */
export const parseExposition = (text: string): Map<string, MetricFamily> => {
  const families = new Map<string, MetricFamily>();
  const family = (name: string): MetricFamily => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const f = family(meta[2]!);
      if (meta[1] === 'HELP') f.help = meta[3] ?? '';
      else f.type = meta[3] ?? '';
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    const name = sample[1]!;
    const owner = families.has(name) ? name : name.replace(/_(bucket|sum|count|created)$/, '');
    family(owner).samples.push({ name, labels, value: Number(sample[3]) });
  }
  return families;
};

/**
 * The value of the sample `name` (a family name, or a histogram's `<family>_count` /
 * `_sum` / `_bucket`) whose labels include `labels`; undefined when there is none.
 */
export const sampleValue = (
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined => {
  const owner = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
  return families
    .get(owner)
    ?.samples.find(
      (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    )?.value;
};
