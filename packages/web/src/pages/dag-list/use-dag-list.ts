import { useEffect, useState } from 'react';
import type { ListDagsResponse } from '@trellis/contract';
import { type ApiError, seg } from '../../api/client';
import { useApp } from '../../app-context';
import { isActiveRun } from '../../lib/status';
import { usePoll } from '../../lib/use-poll';
import type { ListParams } from './use-list-params';

const PER_PAGE = 50;

/** The page of DAGs the params select (polled, faster while one runs), all tags, and suspend. */
export const useDagList = ({ query, tag, page, sort }: ListParams) => {
  const { api, toast } = useApp();
  const [tags, setTags] = useState<string[]>([]);

  useEffect(() => {
    api
      .get<{ tags: string[] }>('/dags/tags')
      .then((r) => setTags(r.tags))
      .catch(() => undefined);
  }, [api]);

  const list = usePoll(
    () =>
      api.get<ListDagsResponse>('/dags', {
        page,
        perPage: PER_PAGE,
        name: query,
        tag,
        sort,
        order: 'asc',
      }),
    [query, tag, page, sort],
    (d) => d.dags.some((x) => isActiveRun(x.latestDAGRun.status)),
  );

  const suspend = async (fileName: string, value: boolean) => {
    try {
      await api.post(`/dags/${seg(fileName)}/suspend`, { suspend: value });
      toast(`${fileName} ${value ? 'suspended' : 'resumed'}`);
      list.reload();
    } catch (e) {
      toast((e as ApiError).message, 'error');
    }
  };

  return { tags, list, suspend };
};
