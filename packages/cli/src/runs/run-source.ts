import type { ApiLogChunk, ApiRunDetails } from '@trellis/contract';
import { AppError, ErrorCode } from '@trellis/core';
import type { RunReads } from '@trellis/services';
import type { Runtime } from '../wiring/runtime.js';
import { ApiError, type ApiClient } from './api-client.js';

/** The wire schemas (zod), loaded with the first call rather than with `trellis --help`. */
const wire = () => import('./wire-schemas.js');

/** A run by DAG name and id (`latest` allowed where the API allows it). */
export interface RunRef {
  readonly name: string;
  readonly dagRunId: string;
}

/** Which lines of a log to read (spec: log endpoints' query). */
export interface LogWindow {
  readonly offset?: number;
  readonly limit?: number;
  readonly tail?: number;
}

/**
 * Where the CLI reads runs from: a server's API or the local store, in the API's shapes, so
 * waiting, following and reporting work the same for both.
 */
export interface RunSource {
  /**
   * The run's details. With `waitSec`, a server that long-polls answers once the run is final or
   * after that many seconds; one that does not (and the local store) answers at once.
   */
  details(ref: RunRef, waitSec?: number): Promise<ApiRunDetails>;
  /** A window of a step's stdout or stderr; `undefined` when the step has written none yet. */
  stepLog(
    ref: RunRef,
    step: string,
    stream: 'stdout' | 'stderr',
    window: LogWindow,
  ): Promise<ApiLogChunk | undefined>;
}

const path = (ref: RunRef): string =>
  `/dag-runs/${encodeURIComponent(ref.name)}/${encodeURIComponent(ref.dagRunId)}`;

const query = (q: Record<string, string | number | undefined>): string => {
  const parts = Object.entries(q).filter((e): e is [string, string | number] => e[1] !== undefined);
  const search = new URLSearchParams(parts.map(([k, v]): [string, string] => [k, String(v)]));
  return parts.length === 0 ? '' : `?${search.toString()}`;
};

/** Runs on a server, through its REST API. */
export const remoteRunSource = (client: ApiClient): RunSource => ({
  async details(ref, waitSec) {
    const q = waitSec === undefined ? '' : query({ waitFor: 'final', timeout: waitSec });
    return client.call('GET', `${path(ref)}${q}`, {
      schema: (await wire()).RunDetailsSchema,
      key: 'dagRunDetails',
    });
  },
  async stepLog(ref, step, stream, window) {
    try {
      return await client.call(
        'GET',
        `${path(ref)}/steps/${encodeURIComponent(step)}/log${query({ stream, ...window })}`,
        { schema: (await wire()).LogChunkSchema },
      );
    } catch (e) {
      // the log file of a step that has just started may not exist yet
      if (e instanceof ApiError && e.code === ErrorCode.NotFound) return undefined;
      throw e;
    }
  },
});

/** Runs in the local store (`SVC_HOME`), read as the API would answer. */
export const localRunSource = (rt: Runtime): RunSource => {
  // Imported on first use: the API package brings express, which `trellis --help` must not load.
  let readsOf: Promise<RunReads> | undefined;
  const readsNow = (): Promise<RunReads> =>
    (readsOf ??= import('@trellis/services').then((m) => new m.RunReads(rt.store)));
  return {
    async details(ref) {
      const [{ toApiRunDetails }, reads] = await Promise.all([import('@trellis/api'), readsNow()]);
      return toApiRunDetails(await reads.find(ref));
    },
    async stepLog(ref, step, stream, window) {
      const reads = await readsNow();
      try {
        return await reads.stepLog(await reads.find(ref), step, stream, window);
      } catch (e) {
        if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
        throw e;
      }
    },
  };
};
