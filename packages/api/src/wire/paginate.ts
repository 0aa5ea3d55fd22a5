import type { ApiPagination } from '@trellis/contract';

/** The pagination object for `total` records (nextPage/prevPage null where there is none). */
export const paginate = (total: number, page: number, perPage: number): ApiPagination => {
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  return {
    totalRecords: total,
    currentPage: page,
    totalPages,
    nextPage: page < totalPages ? page + 1 : null,
    prevPage: page > 1 ? Math.min(page - 1, totalPages) : null,
  };
};
