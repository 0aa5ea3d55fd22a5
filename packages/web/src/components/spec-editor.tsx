import { type RefObject, useRef } from 'react';
import { deniedTitle, useApp, useCan } from '../app-context';
import { type LocatedProblem, locateProblems, problemLines } from '../lib/spec-errors';
import { useSpecDraft } from '../lib/use-spec-draft';
import { ErrorBox } from './error-box';

export type Draft = ReturnType<typeof useSpecDraft>;

const SpecToolbar = ({ draft, canEdit }: { draft: Draft; canEdit: boolean }) => {
  const { session } = useApp();
  const { errors, checking, dirty, saving } = draft;
  return (
    <div className="toolbar">
      <span className={`badge ${errors.length ? 'status-failed' : 'status-ok'}`} aria-live="polite">
        <span className="dot" />
        {checking
          ? 'checking…'
          : errors.length
            ? `${errors.length} problem${errors.length > 1 ? 's' : ''}`
            : 'valid'}
      </span>
      <span className="spacer" />
      <button type="button" disabled={!dirty || saving} onClick={draft.revert}>
        Revert
      </button>
      <button
        type="button"
        className="primary"
        disabled={!canEdit || !dirty || saving}
        title={canEdit ? 'Save the definition (Ctrl+S)' : deniedTitle(session, 'edit DAGs')}
        onClick={() => void draft.save()}
      >
        {saving ? 'Saving…' : 'Save'}
      </button>
    </div>
  );
};

/** The text area with a line-number gutter that scrolls along and marks the `bad` lines. */
const SpecText = ({
  draft,
  canEdit,
  bad,
  area,
  onSave,
}: {
  draft: Draft;
  canEdit: boolean;
  bad: ReadonlySet<number>;
  area: RefObject<HTMLTextAreaElement | null>;
  onSave: () => void;
}) => {
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = draft.text.split('\n').length;
  return (
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
        value={draft.text}
        readOnly={!canEdit}
        onChange={(e) => draft.setText(e.target.value)}
        onScroll={(e) => {
          if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
        }}
        onKeyDown={(e) => {
          if ((e.ctrlKey || e.metaKey) && e.key === 's') {
            e.preventDefault();
            if (canEdit) onSave();
          }
        }}
      />
    </div>
  );
};

const ProblemList = ({
  problems,
  onJump,
}: {
  problems: readonly LocatedProblem[];
  onJump: (line: number) => void;
}) => (
  <ul className="problems" aria-label="Problems">
    {problems.map((p, i) => (
      <li key={i}>
        {p.line !== undefined ? (
          <button type="button" className="link" onClick={() => onJump(p.line ?? 1)}>
            line {p.line}
          </button>
        ) : null}{' '}
        {p.message}
      </li>
    ))}
  </ul>
);

/** Selects line `line` of the text area and scrolls it into view. */
const selectLine = (a: HTMLTextAreaElement, text: string, line: number) => {
  const lines = text.split('\n');
  const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  a.focus();
  a.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  a.scrollTop = Math.max(0, (line - 4) * 20);
};

/** The text area and its problem list (a problem's line number jumps to it). */
export const SpecBody = ({
  draft,
  canEdit,
  onSave,
}: {
  draft: Draft;
  canEdit: boolean;
  /** Ctrl+S. */
  onSave: () => void;
}) => {
  const area = useRef<HTMLTextAreaElement>(null);
  const problems = locateProblems(draft.errors);
  const jump = (line: number) => {
    if (area.current) selectLine(area.current, draft.text, line);
  };
  return (
    <>
      <SpecText
        draft={draft}
        canEdit={canEdit}
        bad={problemLines(problems)}
        area={area}
        onSave={onSave}
      />
      {problems.length > 0 && <ProblemList problems={problems} onJump={jump} />}
    </>
  );
};

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
  const canEdit = useCan('dags:write');
  const draft = useSpecDraft(fileName, initial, onSaved);
  return (
    <div className="spec-editor">
      <SpecToolbar draft={draft} canEdit={canEdit} />
      {draft.failure && <ErrorBox error={draft.failure} what="saving the definition" />}
      <SpecBody
        draft={draft}
        canEdit={canEdit}
        onSave={() => {
          if (draft.dirty) void draft.save();
        }}
      />
    </div>
  );
};
