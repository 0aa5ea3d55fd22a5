import type request from 'supertest';
import { expect } from 'vitest';
import { ErrorBody } from '@trellis/contract';

/** Expects an error answer: the HTTP status, the error code and, when given, the message. */
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
