import { useState } from 'react';
import { seg } from '../../api/client';
import { ErrorBox } from '../../components/error-box';
import { isActiveRun } from '../../lib/status';
import { Link, useRouter } from '../../router';
import { DagDialogs } from './dag-dialogs';
import { DagFacts } from './dag-facts';
import { type DagDialog, DagHeader } from './dag-header';
import { HistoryPanel } from './dag-history';
import { GraphPanel, SpecPanel, TabBar } from './dag-tabs';
import { useDagActions } from './use-dag-actions';
import { type Tab, useDagData } from './use-dag-data';

/** One DAG: its graph (live during a run), definition editor, run history, and controls. */
export const DagPage = ({ fileName }: { fileName: string }) => {
  const router = useRouter();
  const tab = (router.search.get('tab') as Tab | null) ?? 'graph';
  const [dialog, setDialog] = useState<DagDialog>();
  const [newName, setNewName] = useState(fileName);
  const { details, latest, history, spec } = useDagData(fileName, tab);
  const actions = useDagActions(fileName, () => {
    details.reload();
    history.reload();
  });

  const setTab = (t: Tab) =>
    router.navigate(`/dags/${seg(fileName)}${t === 'graph' ? '' : `?tab=${t}`}`, { replace: true });

  if (details.error && !details.data)
    return <ErrorBox error={details.error} what="reading the DAG" />;
  const d = details.data;
  const dagName = d?.dag.name ?? fileName;
  return (
    <section className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/dags">DAGs</Link> / <span>{fileName}</span>
      </nav>
      <DagHeader
        dagName={dagName}
        d={d}
        running={d ? isActiveRun(d.latestDAGRun.status) : false}
        onDialog={setDialog}
        onToggleSuspend={() => actions.toggleSuspend(d?.suspended)}
      />
      {d?.dag.description && <p className="lead">{d.dag.description}</p>}
      {d && <DagFacts d={d} />}
      {d?.errors.map((e) => (
        <div key={e} className="error-box">
          {e}
        </div>
      ))}
      {actions.actionError && <ErrorBox error={actions.actionError} />}
      <TabBar tab={tab} setTab={setTab} />
      <div role="tabpanel">
        {tab === 'graph' && d && <GraphPanel d={d} dagName={dagName} latest={latest.data} />}
        {tab === 'spec' && (
          <SpecPanel
            fileName={fileName}
            spec={spec}
            onSaved={() => {
              spec.reload();
              details.reload();
            }}
          />
        )}
        {tab === 'history' && <HistoryPanel history={history} />}
      </div>
      <DagDialogs
        dialog={dialog}
        onClose={() => setDialog(undefined)}
        fileName={fileName}
        dagName={dagName}
        newName={newName}
        setNewName={setNewName}
        actions={actions}
      />
    </section>
  );
};
