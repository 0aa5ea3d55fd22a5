import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { ErrorBox } from './error-box';

const render = (error: ApiError, what?: string): string =>
  renderToStaticMarkup(createElement(ErrorBox, { error, ...(what ? { what } : {}) }));

describe('ErrorBox', () => {
  it('shows a 403 as a denied permission naming the action and the server reason', () => {
    const html = render(
      new ApiError(403, 'forbidden', 'role viewer may not runs:write'),
      'stopping the run',
    );
    expect(html).toContain('role="alert"');
    expect(html).toContain('Permission denied (stopping the run):');
    expect(html).toContain('role viewer may not runs:write');
  });

  it('shows a 503 service_unavailable as a notice, not an error', () => {
    const html = render(new ApiError(503, 'service_unavailable', 'no coordinator runs'));
    expect(html).toContain('role="status"');
    expect(html).toContain('Not available on this server.');
  });

  it('names other failures by status and action', () => {
    expect(render(new ApiError(500, 'internal_error', 'boom'), 'saving')).toContain(
      'Error 500 while saving:',
    );
    expect(render(new ApiError(0, 'network', 'offline'))).toContain('Server unreachable:');
  });
});
