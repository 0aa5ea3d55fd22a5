import { useRouter } from '../../router';

/** The runs page's filters as URL parameters: the URL alone reproduces a view. */
export const FILTER_KEYS = ['status', 'dag', 'tag', 'worker', 'from', 'to'] as const;
type FilterKey = (typeof FILTER_KEYS)[number];
export type RunFilters = Record<FilterKey, string>;

/** Rows per page offered; the first is the default. */
export const PAGE_SIZES = [50, 20, 100] as const;

/** Reads the filters, page and page size from the URL, and writes changes back to it. */
export const useRunFilters = () => {
  const router = useRouter();
  const s = router.search;
  const filters = Object.fromEntries(FILTER_KEYS.map((k) => [k, s.get(k) ?? ''])) as RunFilters;
  const page = Math.max(1, Number(s.get('page') ?? '1') || 1);
  const sizeParam = Number(s.get('perPage'));
  const perPage =
    Number.isInteger(sizeParam) && sizeParam >= 1 && sizeParam <= 1000 ? sizeParam : PAGE_SIZES[0];

  /** Sets (or, given '', removes) parameters; a filter change goes back to page 1. */
  const setParams = (changes: Record<string, string>) => {
    const p = new URLSearchParams(s);
    for (const [k, v] of Object.entries(changes))
      if (v) p.set(k, v);
      else p.delete(k);
    if (!('page' in changes)) p.delete('page');
    const q = p.toString();
    router.navigate(`/runs${q ? `?${q}` : ''}`);
  };
  return { filters, page, perPage, setParams };
};
