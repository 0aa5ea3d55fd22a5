import type { ApiRunDetails, DagDetailsResponse } from '@trellis/contract';
import { seg } from '../../api/client';
import { DagGraph } from '../../components/dag-graph';
import { ErrorBox } from '../../components/error-box';
import { SpecEditor } from '../../components/spec-editor';
import { statusesOf } from '../../lib/graph-input';
import type { PollState } from '../../lib/use-poll';
import { useRouter } from '../../router';
import type { Tab } from './use-dag-data';

const TAB_LABEL: Record<Tab, string> = { graph: 'Graph', spec: 'Definition', history: 'History' };

export const TabBar = ({ tab, setTab }: { tab: Tab; setTab: (t: Tab) => void }) => (
  <div className="tabs" role="tablist">
    {(['graph', 'spec', 'history'] as const).map((t) => (
      <button
        key={t}
        type="button"
        role="tab"
        aria-selected={tab === t}
        className={tab === t ? 'active' : undefined}
        onClick={() => setTab(t)}
      >
        {TAB_LABEL[t]}
      </button>
    ))}
  </div>
);

/** The Graph tab: the steps, coloured by the latest run; a click opens that run. */
export const GraphPanel = ({
  d,
  dagName,
  latest,
}: {
  d: DagDetailsResponse;
  dagName: string;
  latest: ApiRunDetails | undefined;
}) => {
  const router = useRouter();
  return (
    <>
      <DagGraph
        steps={d.dag.steps}
        {...(latest ? { statuses: statusesOf(latest.nodes) } : {})}
        onSelect={() => {
          if (latest) router.navigate(`/runs/${seg(dagName)}/${seg(latest.dagRunId)}`);
        }}
      />
      {latest && (
        <p className="muted small">
          Colours show run {latest.dagRunId} ({latest.statusLabel}).
        </p>
      )}
    </>
  );
};

/** The Definition tab: the editor once the stored text is read. */
export const SpecPanel = ({
  fileName,
  spec,
  onSaved,
}: {
  fileName: string;
  spec: PollState<{ spec: string; errors: string[] }>;
  onSaved: () => void;
}) =>
  spec.error ? (
    <ErrorBox error={spec.error} what="reading the definition" />
  ) : spec.data ? (
    <SpecEditor fileName={fileName} initial={spec.data.spec} onSaved={onSaved} />
  ) : (
    <p className="muted">Loading…</p>
  );
