import { useEffect, useRef, useState } from 'react';
import { type ApiError, seg } from '../api/client';
import { deniedTitle, useApp, useCan } from '../app-context';
import { locateProblems, problemLines } from '../lib/spec-errors';
import { ErrorBox } from './error-box';

/**
 * The DAG's YAML with line numbers: validated as you type through `POST /dags/validate`, saved
 * through `PUT /dags/{fileName}/spec`; problems are listed and their lines marked.
 */
export const SpecEditor = ({
  fileName,
  initial,
  onSaved,
}: {
  fileName: string;
  initial: string;
  onSaved: () => void;
}) => {
  const { api, session, toast } = useApp();
  const canEdit = useCan('dags:write');
  // `base`: the text as last loaded or saved; a reload only replaces text nobody is editing.
  const [base, setBase] = useState(initial);
  const [text, setText] = useState(initial);
  const [errors, setErrors] = useState<string[]>([]);
  const [checking, setChecking] = useState(false);
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<ApiError>();
  const gutter = useRef<HTMLDivElement>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const seq = useRef(0);
  const dirty = text !== base;

  useEffect(() => {
    if (initial === base) return;
    if (text === base) setText(initial);
    setBase(initial);
    // only when the stored text changes
  }, [initial]);

  useEffect(() => {
    const mine = ++seq.current;
    setChecking(true);
    const t = window.setTimeout(() => {
      api
        .post<{ valid: boolean; errors: string[] }>('/dags/validate', {
          spec: text,
          name: fileName,
        })
        .then((r) => {
          if (mine === seq.current) setErrors(r.errors);
        })
        .catch((e: unknown) => {
          if (mine === seq.current) setFailure(e as ApiError);
        })
        .finally(() => {
          if (mine === seq.current) setChecking(false);
        });
    }, 350);
    return () => window.clearTimeout(t);
  }, [api, text, fileName]);

  const save = async () => {
    setSaving(true);
    setFailure(undefined);
    try {
      const r = await api.put<{ errors: string[] }>(`/dags/${seg(fileName)}/spec`, { spec: text });
      if (r.errors.length > 0) {
        setErrors(r.errors);
        toast('Not saved: fix the problems first', 'error');
      } else {
        toast(`Saved ${fileName}`);
        setBase(text);
        onSaved();
      }
    } catch (e) {
      setFailure(e as ApiError);
    } finally {
      setSaving(false);
    }
  };

  const problems = locateProblems(errors);
  const bad = problemLines(problems);
  const lineCount = text.split('\n').length;
  const jump = (line: number) => {
    const a = area.current;
    if (!a) return;
    const lines = text.split('\n');
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    a.focus();
    a.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    a.scrollTop = Math.max(0, (line - 4) * 20);
  };

  return (
    <div className="spec-editor">
      <div className="toolbar">
        <span
          className={`badge ${errors.length ? 'status-failed' : 'status-ok'}`}
          aria-live="polite"
        >
          <span className="dot" />
          {checking
            ? 'checking…'
            : errors.length
              ? `${errors.length} problem${errors.length > 1 ? 's' : ''}`
              : 'valid'}
        </span>
        <span className="spacer" />
        <button type="button" disabled={!dirty || saving} onClick={() => setText(base)}>
          Revert
        </button>
        <button
          type="button"
          className="primary"
          disabled={!canEdit || !dirty || saving}
          title={canEdit ? 'Save the definition (Ctrl+S)' : deniedTitle(session, 'edit DAGs')}
          onClick={() => void save()}
        >
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
      {failure && <ErrorBox error={failure} what="saving the definition" />}
      <div className="editor">
        <div className="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => (
            <div key={i} className={bad.has(i + 1) ? 'bad' : undefined}>
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          ref={area}
          aria-label="DAG definition (YAML)"
          spellCheck={false}
          value={text}
          readOnly={!canEdit}
          onChange={(e) => setText(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
          onKeyDown={(e) => {
            if ((e.ctrlKey || e.metaKey) && e.key === 's') {
              e.preventDefault();
              if (canEdit && dirty) void save();
            }
          }}
        />
      </div>
      {problems.length > 0 && (
        <ul className="problems" aria-label="Problems">
          {problems.map((p, i) => (
            <li key={i}>
              {p.line !== undefined ? (
                <button type="button" className="link" onClick={() => jump(p.line ?? 1)}>
                  line {p.line}
                </button>
              ) : null}{' '}
              {p.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
};
