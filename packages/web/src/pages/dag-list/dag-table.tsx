import type { ReactNode } from 'react';
import type { ListDagsResponse } from '@trellis/contract';
import { DagRow, type DagRowActions } from './dag-row';

const MessageRow = ({ children }: { children: ReactNode }) => (
  <tr>
    <td colSpan={6} className="muted">
      {children}
    </td>
  </tr>
);

/** The table of DAGs, with a row saying so while loading or when none match. */
export const DagTable = ({
  data,
  loading,
  filtered,
  actions,
}: {
  data: ListDagsResponse | undefined;
  loading: boolean;
  /** Whether a name or tag filter is on (changes what "no DAGs" says). */
  filtered: boolean;
  actions: DagRowActions;
}) => (
  <div className="table-wrap">
    <table className="table" aria-label="DAGs">
      <thead>
        <tr>
          <th>Name</th>
          <th className="hide-narrow">Schedule</th>
          <th>Latest run</th>
          <th className="hide-narrow">Next run</th>
          <th>Active</th>
          <th aria-label="Actions" />
        </tr>
      </thead>
      <tbody>
        {loading && !data && <MessageRow>Loading…</MessageRow>}
        {data?.dags.length === 0 && (
          <MessageRow>
            No DAGs{filtered ? ' match' : ' yet: add YAML files to the DAGs folder'}.
          </MessageRow>
        )}
        {data?.dags.map((d) => (
          <DagRow key={d.fileName} d={d} actions={actions} />
        ))}
      </tbody>
    </table>
  </div>
);
