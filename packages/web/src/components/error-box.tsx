import type { ApiError } from '../api/client';

/** An API error as the user should read it: what was refused, and why. */
export const ErrorBox = ({ error, what }: { error: ApiError; what?: string }) => {
  if (error.status === 503 && error.code === 'service_unavailable')
    return (
      <div className="notice" role="status">
        <strong>Not available on this server.</strong> {error.message}
      </div>
    );
  const title =
    error.status === 403
      ? `Permission denied${what ? ` (${what})` : ''}`
      : error.status === 404
        ? 'Not found'
        : error.status === 0
          ? 'Server unreachable'
          : `Error ${error.status}${what ? ` while ${what}` : ''}`;
  return (
    <div className="error-box" role="alert">
      <strong>{title}:</strong> {error.message}
    </div>
  );
};
