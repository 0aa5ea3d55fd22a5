import type request from 'supertest';
import { expect } from 'vitest';
import { ErrorBody } from '@trellis/contract';

/**
 * Expects an error answer: the HTTP status, the error code and, when given, the message. The same
 * helper as packages/api/test/support/expect-error.ts (the DAG route tests'): files here reach a
 * package only through its entry, and test helpers are not part of one.
 */
export const expectError = (
  res: request.Response,
  status: number,
  code: string,
  message?: RegExp,
): void => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = ErrorBody.parse(res.body);
  expect(body.code).toBe(code);
  if (message) expect(body.message).toMatch(message);
};
