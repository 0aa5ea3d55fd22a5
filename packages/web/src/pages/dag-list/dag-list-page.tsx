import { useState } from 'react';
import { ErrorBox } from '../../components/error-box';
import { StartDialog } from '../../components/start-dialog';
import { Link } from '../../router';
import { DagListToolbar } from './dag-list-toolbar';
import type { DagRowActions, StartMode } from './dag-row';
import { DagTable } from './dag-table';
import { Pager } from './pager';
import { useDagList } from './use-dag-list';
import { useListParams } from './use-list-params';

/** The DAG list: search by name and tag, server-side pages, run and suspend controls. */
export const DagListPage = () => {
  const params = useListParams();
  const [dialog, setDialog] = useState<{ fileName: string; mode: StartMode }>();
  const { tags, list, suspend } = useDagList(params);
  const actions: DagRowActions = {
    onTag: (t) => params.setParam({ tag: t, page: '' }),
    onSuspend: (fileName, value) => void suspend(fileName, value),
    onStart: (fileName, mode) => setDialog({ fileName, mode }),
  };

  const p = list.data?.pagination;
  return (
    <section className="page">
      <header className="page-head">
        <h1>DAGs</h1>
        {p && <span className="muted">{p.totalRecords} in total</span>}
        <span className="spacer" />
        <Link to="/new-dag" className="button primary">
          New DAG
        </Link>
      </header>
      <DagListToolbar params={params} tags={tags} />
      {list.error && <ErrorBox error={list.error} what="listing DAGs" />}
      {list.data?.errors.map((e) => (
        <div key={e} className="warning">
          {e}
        </div>
      ))}
      <DagTable
        data={list.data}
        loading={list.loading}
        filtered={Boolean(params.query || params.tag)}
        actions={actions}
      />
      {p && p.totalPages > 1 && <Pager p={p} setParam={params.setParam} />}
      {dialog && (
        <StartDialog
          fileName={dialog.fileName}
          mode={dialog.mode}
          onClose={() => setDialog(undefined)}
        />
      )}
    </section>
  );
};
