import { ConfirmDialog } from '../../components/dialog';
import type { RunConfirm } from './run-header';
import type { RunActions } from './use-run';

/** The "are you sure?" of the action asked for, if any: stop, dequeue, or retry. */
export const RunDialogs = ({
  confirm,
  onClose,
  actions,
}: {
  confirm: RunConfirm | undefined;
  onClose: () => void;
  actions: RunActions;
}) => (
  <>
    {confirm === 'stop' && (
      <ConfirmDialog
        title="Stop this run?"
        message="Running steps get their stop signal; the run ends cancelled."
        confirm="Stop run"
        danger
        onClose={onClose}
        onConfirm={actions.stop}
      />
    )}
    {confirm === 'dequeue' && (
      <ConfirmDialog
        title="Take this run off its queue?"
        message="It ends cancelled without running."
        confirm="Dequeue"
        onClose={onClose}
        onConfirm={actions.dequeue}
      />
    )}
    {confirm === 'retry' && (
      <ConfirmDialog
        title="Retry this run?"
        message="A new run starts; steps that succeeded keep their result."
        confirm="Retry"
        onClose={onClose}
        onConfirm={() => void actions.retry()}
      />
    )}
  </>
);
