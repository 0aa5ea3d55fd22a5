import { maxHeaderSize, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** The answer to a request Node's HTTP parser refused: a spec error body, status 400. */
const answerOf = (err: NodeJS.ErrnoException): string => {
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? `the request line and headers are over ${maxHeaderSize} bytes: send long values in a JSON body instead of the URL`
      : `malformed HTTP request (${err.code ?? 'parse error'}: ${err.message}); percent-encode characters outside ASCII in the URL`;
  const body = JSON.stringify({ code: 'bad_request', message });
  return [
    'HTTP/1.1 400 Bad Request',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
};

/**
 * Answers requests that never reach Express (a URL over the header size limit, raw bytes outside
 * ASCII in the request line) with a JSON 400 `bad_request` (spec: Errors) instead of Node's bare
 * 400 or 431 without a body.
 */
export const answerClientErrors = (server: Server): void => {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(answerOf(err));
  });
};
