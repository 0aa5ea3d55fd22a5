import { NODE_STATUS_LABEL, RUN_STATUS_LABEL, nodeTone, statusTone } from '../lib/status';

export const StatusBadge = ({
  status,
  label,
  node = false,
}: {
  status: number;
  label?: string;
  node?: boolean;
}) => {
  const text = label || (node ? NODE_STATUS_LABEL : RUN_STATUS_LABEL)[status] || String(status);
  const tone = node ? nodeTone(status) : statusTone(status);
  return (
    <span className={`badge status-${tone}`} data-status={text}>
      <span className="dot" aria-hidden="true" />
      {text}
    </span>
  );
};
