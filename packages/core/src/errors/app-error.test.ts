import { describe, expect, it } from 'vitest';
import { AppError, ErrorCode, alreadyRunning, notFound, notRunning } from './app-error.js';

describe('AppError', () => {
  it('carries exactly the error codes of the spec', () => {
    expect(Object.values(ErrorCode).sort()).toEqual(
      [
        'already_exists',
        'already_running',
        'bad_gateway',
        'bad_request',
        'forbidden',
        'internal_error',
        'not_found',
        'not_running',
        'remote_node_error',
        'service_unavailable',
        'unauthorized',
      ].sort(),
    );
  });

  it('is recognised by its brand, also across copies, and not for plain errors', () => {
    const e = notFound('run', 'abc');
    expect(AppError.is(e)).toBe(true);
    expect(AppError.is(new Error('x'))).toBe(false);
    expect(AppError.is({ [Symbol.for('trellis.AppError')]: true })).toBe(true);
    expect(AppError.is(null)).toBe(false);
  });

  it('names the resource and value in its message and details', () => {
    expect(notFound('dag', 'nightly')).toMatchObject({
      code: 'not_found',
      message: 'dag not found: nightly',
      details: { kind: 'dag', id: 'nightly' },
    });
    expect(alreadyRunning('etl').message).toBe('DAG "etl" is already running');
    expect(notRunning('etl', 'r1')).toMatchObject({
      code: 'not_running',
      details: { dagName: 'etl', dagRunId: 'r1' },
    });
  });
});
