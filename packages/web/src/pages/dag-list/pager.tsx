import type { ApiPagination } from '@trellis/contract';

/** Previous / next page buttons, shown when there is more than one page. */
export const Pager = ({
  p,
  setParam,
}: {
  p: ApiPagination;
  setParam: (changes: Record<string, string>) => void;
}) => (
  <nav className="pager" aria-label="Pages">
    <button
      type="button"
      disabled={p.prevPage === null}
      onClick={() => setParam({ page: String(p.prevPage ?? 1) })}
    >
      ‹ Previous
    </button>
    <span>
      Page {p.currentPage} of {p.totalPages}
    </span>
    <button
      type="button"
      disabled={p.nextPage === null}
      onClick={() => setParam({ page: String(p.nextPage ?? p.totalPages) })}
    >
      Next ›
    </button>
  </nav>
);
