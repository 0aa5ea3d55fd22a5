import { useEffect, useState } from 'react';
import { RUN_STATUS_LABEL } from '../../lib/status';
import { FILTER_KEYS, type RunFilters } from './use-run-filters';

const TEXT_FIELDS: { key: 'dag' | 'tag' | 'worker'; label: string; hint: string }[] = [
  { key: 'dag', label: 'DAG', hint: 'DAG name' },
  { key: 'tag', label: 'Tag', hint: 'any tag' },
  { key: 'worker', label: 'Worker', hint: 'worker id, local' },
];

const StatusSelect = ({ value, onChange }: { value: string; onChange: (v: string) => void }) => (
  <label>
    Status{' '}
    <select name="status" value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">any</option>
      {Object.entries(RUN_STATUS_LABEL).map(([v, l]) => (
        <option key={v} value={v}>
          {l}
        </option>
      ))}
    </select>
  </label>
);

/** The filters: edited here, applied to the URL on submit (Enter or Apply). */
export const RunFilterForm = ({
  filters,
  tags,
  apply,
}: {
  filters: RunFilters;
  tags: readonly string[];
  apply: (f: RunFilters) => void;
}) => {
  const [draft, setDraft] = useState(filters);
  const key = FILTER_KEYS.map((k) => filters[k]).join('\n');
  useEffect(() => setDraft(filters), [key]); // back/forward, or a link, changed the URL
  const set = (k: keyof RunFilters, v: string) => setDraft((d) => ({ ...d, [k]: v }));
  return (
    <form
      className="toolbar run-filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        apply({
          ...draft,
          dag: draft.dag.trim(),
          tag: draft.tag.trim(),
          worker: draft.worker.trim(),
        });
      }}
    >
      <StatusSelect value={draft.status} onChange={(v) => set('status', v)} />
      {TEXT_FIELDS.map((f) => (
        <label key={f.key}>
          {f.label}{' '}
          <input
            name={f.key}
            value={draft[f.key]}
            placeholder={f.hint}
            size={12}
            {...(f.key === 'tag' ? { list: 'run-filter-tags' } : {})}
            onChange={(e) => set(f.key, e.target.value)}
          />
        </label>
      ))}
      <datalist id="run-filter-tags">
        {tags.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <label>
        From{' '}
        <input
          type="date"
          name="from"
          value={draft.from}
          onChange={(e) => set('from', e.target.value)}
        />
      </label>
      <label>
        to{' '}
        <input type="date" name="to" value={draft.to} onChange={(e) => set('to', e.target.value)} />
      </label>
      <button type="submit" className="primary">
        Apply
      </button>
      <button
        type="button"
        onClick={() => apply(Object.fromEntries(FILTER_KEYS.map((k) => [k, ''])) as RunFilters)}
      >
        Clear
      </button>
    </form>
  );
};
