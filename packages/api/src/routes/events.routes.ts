import { AppError, ErrorCode } from '@trellis/core';
import {
  EventsQuery,
  LogLinesEventSchema,
  RunEventSchema,
  StepLogStreamQuery,
  StepPath,
} from '@trellis/contract';
import {
  RUN_EVENT_NOUNS,
  RUN_EVENT_TYPES,
  findNode,
  followStepLog,
  type RunEventFilter,
} from '@trellis/services';
import type { Request } from 'express';
import { defineRoutes } from '../http/define-routes.js';
import type { HttpDeps } from '../http/deps.js';
import { SseConnection } from '../http/sse.js';
import { eventsOf } from './run-wait.js';

const ALLOWED_TYPES: readonly string[] = [...RUN_EVENT_NOUNS, ...RUN_EVENT_TYPES];

/** `type=run,step:finished` as a list; 400 naming a value that is no type or noun. */
const typesOf = (type: string | undefined): string[] | undefined => {
  if (type === undefined || type.trim() === '') return undefined;
  const types = type.split(',').map((t) => t.trim());
  const bad = types.find((t) => !ALLOWED_TYPES.includes(t));
  if (bad !== undefined)
    throw new AppError(
      ErrorCode.BadRequest,
      `invalid query: type: "${bad}" is not an event type: use ${ALLOWED_TYPES.join(', ')}`,
      { type: bad, allowed: ALLOWED_TYPES },
    );
  return types;
};

/** The Last-Event-ID header (or `fallback`, a query value) as a number; 400 when not one. */
const lastEventIdOf = (req: Request, fallback: string | undefined): number | undefined => {
  const raw = req.get('Last-Event-ID') ?? fallback;
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw))
    throw new AppError(
      ErrorCode.BadRequest,
      `invalid Last-Event-ID "${raw}": give the id of the last event received (a whole number)`,
      { lastEventId: raw },
    );
  return Number(raw);
};

/**
 * Outbound events (docs/api.md, "Events"): the event stream, and a step's log followed live.
 * Both are Server-Sent Events, readable with the run endpoints' permission.
 */
export const eventRoutes = defineRoutes<HttpDeps>((r) => [
  r.get('/events', {
    query: EventsQuery,
    eventStream: RunEventSchema,
    summary:
      'Run, step, queue and worker transitions as Server-Sent Events; resumable with Last-Event-ID',
    handler: ({ query, req, res }, deps) => {
      const events = eventsOf(deps);
      const types = typesOf(query.type);
      const filter: RunEventFilter = {
        ...(query.dag !== undefined ? { dag: query.dag } : {}),
        ...(query.dagRunId !== undefined ? { dagRunId: query.dagRunId } : {}),
        ...(types ? { types } : {}),
      };
      const after = lastEventIdOf(req, query.lastEventId);
      const conn = new SseConnection(req, res, deps.sse);
      const sub = events.subscribe(filter, (e) => conn.send(e.type, e, e.id), {
        ...(after !== undefined ? { after } : {}),
      });
      conn.onClose(() => sub.unsubscribe());
      conn.batch(() => {
        if (sub.gap)
          conn.send('gap', {
            message: `events after ${after} are no longer kept: resuming from the oldest kept one`,
            lastEventId: after,
          });
        for (const e of sub.replay) conn.send(e.type, e, e.id);
      });
      return Promise.resolve({ status: 200, streamed: true });
    },
  }),
  r.get('/dag-runs/:name/:dagRunId/steps/:stepName/log/stream', {
    params: StepPath,
    query: StepLogStreamQuery,
    eventStream: LogLinesEventSchema,
    summary:
      "A step's log followed live as Server-Sent Events (`log` events of lines, then `end`); resumable with Last-Event-ID (a line number)",
    handler: async ({ params, query, req, res }, deps) => {
      const events = eventsOf(deps);
      const after = lastEventIdOf(req, undefined);
      const from = after !== undefined ? after + 1 : (query.offset ?? 1);
      findNode(await deps.reads.find(params), params.stepName); // 404 before the stream opens
      const conn = new SseConnection(req, res, deps.sse);
      let last = from - 1;
      const stop = await followStepLog(
        { reads: deps.reads, events },
        params,
        params.stepName,
        query.stream,
        from,
        {
          lines: (lines, first) => {
            last = first + lines.length - 1;
            conn.send('log', { from: first, to: last, content: lines.join('\n') }, last);
          },
          end: () => conn.close('end', { lastLine: last }),
          fail: (e) => conn.close('error', { message: `following the log failed: ${e.message}` }),
        },
      );
      conn.onClose(stop);
      return { status: 200, streamed: true };
    },
  }),
]);
