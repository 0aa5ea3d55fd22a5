import { ConfirmDialog, Dialog } from '../../components/dialog';
import { StartDialog } from '../../components/start-dialog';
import type { DagDialog } from './dag-header';
import type { DagActions } from './use-dag-actions';

const RenameDialog = ({
  fileName,
  newName,
  setNewName,
  onClose,
  onRename,
}: {
  fileName: string;
  newName: string;
  setNewName: (name: string) => void;
  onClose: () => void;
  onRename: () => void;
}) => (
  <Dialog
    title={`Rename ${fileName}`}
    onClose={onClose}
    footer={
      <>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button
          type="button"
          className="primary"
          disabled={!/^[a-zA-Z0-9_-]+$/.test(newName) || newName === fileName}
          onClick={onRename}
        >
          Rename
        </button>
      </>
    }
  >
    <label className="form">
      New file name
      <input value={newName} onChange={(e) => setNewName(e.target.value)} autoFocus />
      <small>Letters, digits, “_” and “-”. Suspension moves with the DAG.</small>
    </label>
  </Dialog>
);

/** The dialog open on the DAG page, if any: start, enqueue, stop all, delete, or rename. */
export const DagDialogs = ({
  dialog,
  onClose,
  fileName,
  dagName,
  newName,
  setNewName,
  actions,
}: {
  dialog: DagDialog | undefined;
  onClose: () => void;
  fileName: string;
  dagName: string;
  newName: string;
  setNewName: (name: string) => void;
  actions: DagActions;
}) => (
  <>
    {(dialog === 'start' || dialog === 'enqueue') && (
      <StartDialog fileName={fileName} mode={dialog} onClose={onClose} />
    )}
    {dialog === 'stop-all' && (
      <ConfirmDialog
        title={`Stop every run of ${dagName}?`}
        message="Running steps get their stop signal; the runs end cancelled."
        confirm="Stop all"
        danger
        onClose={onClose}
        onConfirm={actions.stopAll}
      />
    )}
    {dialog === 'delete' && (
      <ConfirmDialog
        title={`Delete ${fileName}?`}
        message="The DAG file is removed. Its run history stays."
        confirm="Delete"
        danger
        onClose={onClose}
        onConfirm={() => void actions.remove()}
      />
    )}
    {dialog === 'rename' && (
      <RenameDialog
        fileName={fileName}
        newName={newName}
        setNewName={setNewName}
        onClose={onClose}
        onRename={() => void actions.rename(newName, onClose)}
      />
    )}
  </>
);
