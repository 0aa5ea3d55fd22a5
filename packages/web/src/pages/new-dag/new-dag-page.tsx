import { useState } from 'react';
import { type ApiError, seg } from '../../api/client';
import { deniedTitle, useApp, useCan } from '../../app-context';
import { ErrorBox } from '../../components/error-box';
import { type Draft, SpecBody } from '../../components/spec-editor';
import { useSpecDraft } from '../../lib/use-spec-draft';
import { useRouter } from '../../router';

const TEMPLATE = `description: what this DAG does
steps:
  - name: hello
    command: echo hello
`;

/** The file-name rule of `POST /dags` (the server checks it too, and says why). */
const NAME_RULE = /^[a-zA-Z0-9_-]+$/;

/** Valid or not, Cancel, and Create (disabled while the name is missing or bad). */
const CreateToolbar = ({
  draft,
  blocked,
  busy,
  canEdit,
}: {
  draft: Draft;
  blocked: boolean;
  busy: boolean;
  canEdit: boolean;
}) => {
  const { session } = useApp();
  const router = useRouter();
  return (
    <div className="toolbar">
      <span
        className={`badge ${draft.errors.length ? 'status-failed' : 'status-ok'}`}
        aria-live="polite"
      >
        <span className="dot" />
        {draft.checking ? 'checking…' : draft.errors.length ? 'has problems' : 'valid'}
      </span>
      <span className="spacer" />
      <button type="button" onClick={() => router.navigate('/dags')}>
        Cancel
      </button>
      <button
        type="submit"
        className="primary"
        disabled={blocked}
        title={canEdit ? 'Create the DAG' : deniedTitle(session, 'create DAGs')}
      >
        {busy ? 'Creating…' : 'Create'}
      </button>
    </div>
  );
};

/**
 * "New DAG": a file name and the YAML in the validating editor; Create sends both in one
 * `POST /dags` (the server validates the spec first, so no file is left half-made) and opens
 * the new DAG. A bad or taken name comes back as the server's 400 / 409, shown as it says.
 */
export const NewDagPage = () => {
  const { api, toast } = useApp();
  const router = useRouter();
  const canEdit = useCan('dags:write');
  const [name, setName] = useState('');
  const [failure, setFailure] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const draft = useSpecDraft(name || 'new-dag', TEMPLATE, () => undefined);
  const nameProblem =
    name !== '' && !NAME_RULE.test(name)
      ? `"${name}" cannot be a DAG file name: use letters, digits, "_" and "-" only`
      : undefined;

  const create = async () => {
    setBusy(true);
    setFailure(undefined);
    try {
      const r = await api.post<{ name: string }>('/dags', { name, spec: draft.text });
      toast(`Created ${r.name}`);
      router.navigate(`/dags/${seg(r.name)}`);
    } catch (e) {
      setFailure(e as ApiError);
    } finally {
      setBusy(false);
    }
  };

  const blocked = !canEdit || busy || name === '' || nameProblem !== undefined;
  return (
    <section className="page">
      <header className="page-head">
        <h1>New DAG</h1>
      </header>
      <form
        className="form new-dag"
        onSubmit={(e) => {
          e.preventDefault();
          if (!blocked) void create();
        }}
      >
        <label>
          Name
          <input
            name="name"
            value={name}
            autoFocus
            onChange={(e) => setName(e.target.value.trim())}
            aria-invalid={nameProblem !== undefined}
            aria-describedby="new-dag-name-help"
            placeholder="nightly-backup"
          />
          <small id="new-dag-name-help" className={nameProblem ? 'field-error' : undefined}>
            {nameProblem ?? 'The file name: letters, digits, "_" and "-" (saved as <name>.yaml).'}
          </small>
        </label>
        {failure && <ErrorBox error={failure} what="creating the DAG" />}
        <div className="spec-editor">
          <CreateToolbar draft={draft} blocked={blocked} busy={busy} canEdit={canEdit} />
          <SpecBody
            draft={draft}
            canEdit={canEdit}
            onSave={() => {
              if (!blocked) void create();
            }}
          />
        </div>
      </form>
    </section>
  );
};
