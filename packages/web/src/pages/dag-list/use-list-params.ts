import { useEffect, useState } from 'react';
import { useRouter } from '../../router';

/**
 * The list's query, kept in the URL (`?name=&tag=&page=&sort=`): the search box's text reaches
 * the URL, and the query, after a short pause, not on every key.
 */
export const useListParams = () => {
  const router = useRouter();
  const [name, setName] = useState(router.search.get('name') ?? '');
  const [query, setQuery] = useState(name);
  const tag = router.search.get('tag') ?? '';
  const page = Number(router.search.get('page') ?? '1') || 1;
  const sort = router.search.get('sort') === 'nextRun' ? 'nextRun' : 'name';

  // Typing filters after a short pause, not on every key.
  useEffect(() => {
    const t = window.setTimeout(() => setQuery(name.trim()), 250);
    return () => window.clearTimeout(t);
  }, [name]);

  /** Sets (or, given '', removes) URL parameters, replacing the history entry. */
  const setParam = (changes: Record<string, string>) => {
    const p = new URLSearchParams(router.search);
    for (const [k, v] of Object.entries(changes))
      if (v) p.set(k, v);
      else p.delete(k);
    const s = p.toString();
    router.navigate(`/dags${s ? `?${s}` : ''}`, { replace: true });
  };
  useEffect(() => {
    if (query !== (router.search.get('name') ?? '')) setParam({ name: query, page: '' });
    // only when the debounced text changes
  }, [query]);

  return { name, setName, query, tag, page, sort, setParam };
};
export type ListParams = ReturnType<typeof useListParams>;
