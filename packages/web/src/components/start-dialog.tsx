import { useEffect, useState } from 'react';
import type { DagDetailsResponse } from '@trellis/contract';
import { type ApiError, seg } from '../api/client';
import { useApp } from '../app-context';
import { paramFields, paramsText, type ParamField } from '../lib/param-fields';
import { useRouter } from '../router';
import { Dialog } from './dialog';
import { ErrorBox } from './error-box';

type Mode = 'start' | 'enqueue';

/**
 * The dialog's fields (parameters preset to the DAG's defaults) and `submit`, which starts or
 * enqueues the run and opens its page.
 */
const useStartForm = (fileName: string, mode: Mode, onClose: () => void) => {
  const { api, toast } = useApp();
  const router = useRouter();
  const [details, setDetails] = useState<DagDetailsResponse>();
  const [params, setParams] = useState('');
  const [fields, setFields] = useState<ParamField[]>([]);
  /** Free-form: the textarea's text is sent; otherwise the fields'. */
  const [freeForm, setFreeForm] = useState(false);
  const [runId, setRunId] = useState('');
  const [queue, setQueue] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .get<DagDetailsResponse>(`/dags/${seg(fileName)}`)
      .then((d) => {
        setDetails(d);
        setParams(d.dag.defaultParams);
        setFields(paramFields(d.dag.params));
        // a DAG whose parameters are fixed shows them as read-only text
        setFreeForm(d.dag.params.length === 0 || d.dag.runConfig.disableParamEdit);
      })
      .catch((e: unknown) => setError(e as ApiError));
  }, [api, fileName]);

  const rc = details?.dag.runConfig;
  const submit = async () => {
    if (!details) return;
    setBusy(true);
    setError(undefined);
    try {
      const body: Record<string, string> = {};
      const text = freeForm ? params : paramsText(fields);
      if (!rc?.disableParamEdit && text.trim() !== '') body.params = text;
      if (!rc?.disableRunIdEdit && runId.trim() !== '') body.dagRunId = runId.trim();
      if (mode === 'enqueue' && queue.trim() !== '') body.queue = queue.trim();
      const res = await api.post<{ dagRunId: string }>(`/dags/${seg(fileName)}/${mode}`, body);
      toast(`${mode === 'start' ? 'Started' : 'Enqueued'} ${details.dag.name} (${res.dagRunId})`);
      onClose();
      router.navigate(`/runs/${seg(details.dag.name)}/${seg(res.dagRunId)}`);
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  };

  const setField = (i: number, value: string) =>
    setFields((fs) => fs.map((f, j) => (j === i ? { ...f, value } : f)));
  const toggleFreeForm = (on: boolean) => {
    if (on) setParams(paramsText(fields));
    setFreeForm(on);
  };
  const form = { details, params, setParams, fields, setField, freeForm, toggleFreeForm };
  return { ...form, runId, setRunId, queue, setQueue, error, busy, submit };
};
type StartForm = ReturnType<typeof useStartForm>;

/**
 * A field per declared parameter (positional ones labelled by position), preset to its default;
 * "Edit as text" switches to the free-form `KEY=value "positional"` / JSON text.
 */
const ParamInputs = ({ form, readOnly }: { form: StartForm; readOnly: boolean }) => {
  const declared = form.fields.length > 0;
  return (
    <fieldset className="params">
      <legend>Parameters</legend>
      {declared && !form.freeForm && (
        <div className="param-fields">
          {form.fields.map((f, i) => (
            <label key={`${f.name}-${i}`}>
              {f.positional ? `Positional ${f.name}` : f.name}
              <input
                name={`param-${f.name}`}
                value={f.value}
                onChange={(e) => form.setField(i, e.target.value)}
                readOnly={readOnly}
              />
            </label>
          ))}
        </div>
      )}
      {form.freeForm && (
        <label>
          Parameters as text
          <textarea
            name="params"
            rows={3}
            value={form.params}
            onChange={(e) => form.setParams(e.target.value)}
            readOnly={readOnly}
            placeholder='KEY=value "positional" or {"KEY":"value"}'
          />
        </label>
      )}
      {declared && !readOnly && (
        <label className="inline">
          <input
            type="checkbox"
            name="freeForm"
            checked={form.freeForm}
            onChange={(e) => form.toggleFreeForm(e.target.checked)}
          />
          Edit as text
        </label>
      )}
      {readOnly && <small>This DAG does not allow editing its parameters.</small>}
    </fieldset>
  );
};

const StartFields = ({ form, mode }: { form: StartForm; mode: Mode }) => {
  const rc = form.details?.dag.runConfig;
  return (
    <form
      className="form"
      onSubmit={(e) => {
        e.preventDefault();
        void form.submit();
      }}
    >
      <ParamInputs form={form} readOnly={rc?.disableParamEdit ?? false} />
      <label>
        Run id (optional)
        <input
          name="dagRunId"
          value={form.runId}
          onChange={(e) => form.setRunId(e.target.value)}
          disabled={rc?.disableRunIdEdit ?? false}
          placeholder="generated when empty"
        />
        {rc?.disableRunIdEdit && <small>This DAG does not allow choosing the run id.</small>}
      </label>
      {mode === 'enqueue' && (
        <label>
          Queue (optional)
          <input
            name="queue"
            value={form.queue}
            onChange={(e) => form.setQueue(e.target.value)}
            placeholder={form.details?.dag.queue || 'the DAG’s own queue'}
          />
        </label>
      )}
    </form>
  );
};

/**
 * Start or enqueue a DAG with parameters and an optional run id. The DAG's
 * `runConfig.disableParamEdit` / `disableRunIdEdit` make those fields read-only.
 */
export const StartDialog = ({
  fileName,
  mode,
  onClose,
}: {
  fileName: string;
  mode: Mode;
  onClose: () => void;
}) => {
  const form = useStartForm(fileName, mode, onClose);
  const verb = mode === 'start' ? 'Start' : 'Enqueue';
  return (
    <Dialog
      title={`${verb} ${form.details?.dag.name ?? fileName}`}
      onClose={onClose}
      footer={
        <>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="primary"
            disabled={!form.details || form.busy}
            onClick={() => void form.submit()}
          >
            {form.busy ? `${verb}ing…` : verb}
          </button>
        </>
      }
    >
      {form.error && (
        <ErrorBox error={form.error} what={mode === 'start' ? 'starting' : 'enqueueing'} />
      )}
      <StartFields form={form} mode={mode} />
    </Dialog>
  );
};
