import express, { type RequestHandler } from 'express';
import { AppError, ErrorCode } from '@trellis/core';

/** Largest request body the API reads. */
const BODY_LIMIT = '10mb';

const FIX = 'send a JSON object as UTF-8 with Content-Type: application/json';

/** What went wrong reading a body, as body-parser or zlib reports it, in the caller's terms. */
const bodyProblem = (e: { type?: unknown; message?: unknown }): string => {
  const why = typeof e.message === 'string' ? e.message : 'the body could not be read';
  switch (e.type) {
    case 'entity.too.large':
      return `request body is too large: at most ${BODY_LIMIT}`;
    case 'entity.parse.failed':
      return `malformed JSON body: ${why}; ${FIX}`;
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return `${why}; ${FIX} (Content-Encoding gzip, deflate or br, or none)`;
    default:
      // zlib: a body whose Content-Encoding says compressed but is not
      return `the request body could not be read: ${why}; ${FIX}`;
  }
};

/**
 * The API's body parser: every body is read as JSON, whatever its Content-Type. Any failure to
 * read it (malformed JSON, too large, a bad charset or compression) is the request's fault:
 * 400 `bad_request` naming the problem and the fix, never a 500.
 */
export const jsonBody = (): RequestHandler => {
  const parse = express.json({ limit: BODY_LIMIT, strict: true, type: () => true });
  return (req, res, next) =>
    parse(req, res, (err?: unknown) => {
      if (err === undefined || err === null) return next();
      const e = typeof err === 'object' ? (err as { type?: unknown; message?: unknown }) : {};
      next(new AppError(ErrorCode.BadRequest, bodyProblem(e)));
    });
};
