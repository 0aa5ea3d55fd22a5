import type { ApiRunOutputs, ApiStepOutputs } from '@trellis/contract';
import { useApp } from '../../app-context';
import { ErrorBox } from '../../components/error-box';
import { usePoll } from '../../lib/use-poll';
import { Link } from '../../router';

/** One row per output variable: the step (and child run) that set it, its name and value. */
interface OutputRow {
  readonly key: string;
  readonly step: string;
  /** The child run the variable comes from, with the path of its page. */
  readonly child?: { readonly label: string; readonly to: string };
  readonly name: string;
  readonly value: string;
}

/** The rows of a run's steps, each child run's rows after its step's (nested as deep as they go). */
const rowsOf = (
  steps: readonly ApiStepOutputs[],
  childLink: (childRunId: string) => string,
  via?: OutputRow['child'],
): OutputRow[] =>
  steps.flatMap((s) => [
    ...Object.entries(s.outputs).map(([name, value]) => ({
      key: `${via?.to ?? ''}/${s.step}/${name}`,
      step: s.step,
      ...(via ? { child: via } : {}),
      name,
      value,
    })),
    ...s.children.flatMap((c: ApiRunOutputs) =>
      rowsOf(c.steps, childLink, {
        label: `${c.name} ${c.dagRunId.slice(0, 8)}`,
        to: childLink(c.dagRunId),
      }),
    ),
  ]);

/**
 * The Outputs panel of the run page (docs/api.md, "Outputs"): every step's output variables and
 * its child runs' (linked), read again whenever the run's status changes.
 */
export const OutputsPanel = ({
  base,
  status,
  childLink,
}: {
  base: string;
  status: number;
  childLink: (childRunId: string) => string;
}) => {
  const { api } = useApp();
  const outputs = usePoll(
    async () => (await api.get<{ dagRunOutputs: ApiRunOutputs }>(`${base}/outputs`)).dagRunOutputs,
    [base, status],
  );
  const rows = outputs.data ? rowsOf(outputs.data.steps, childLink) : [];
  return (
    <div className="panel">
      <h2>Outputs</h2>
      {outputs.error ? (
        <ErrorBox error={outputs.error} what="reading the outputs" />
      ) : !outputs.data ? (
        <p className="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="muted">No step has set an output variable.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Outputs">
            <thead>
              <tr>
                <th>Step</th>
                <th>Variable</th>
                <th>Value</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.key} data-output={row.name}>
                  <td>
                    {row.child && (
                      <>
                        <Link to={row.child.to}>{row.child.label}</Link> ›{' '}
                      </>
                    )}
                    {row.step}
                  </td>
                  <td className="mono">{row.name}</td>
                  <td className="mono pre-wrap">{row.value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
};
