import { RunStatus } from '@trellis/core/status'; // not the contract's zod schemas
import { ExitCode, type CliIo } from '../io.js';
import { ApiClient, ApiError, type AnswerSchema } from '../runs/api-client.js';
import { awaitAndReport } from '../runs/await-run.js';
import { outputOf } from '../runs/report.js';
import { remoteRunSource } from '../runs/run-source.js';
import type { ClientChoice } from './client-flags.js';

/** The `dagRunId` of a start or enqueue answer. */
const RUN_ID_ANSWER: AnswerSchema<string> = {
  safeParse: (v) =>
    typeof v === 'string' && v !== ''
      ? { success: true, data: v }
      : { success: false, error: { issues: [{ message: 'dagRunId is not a string' }] } },
};

/** What `start` or `enqueue` asks a server for. */
export interface RemoteStart {
  readonly kind: 'start' | 'enqueue';
  /** The DAG as the server names it: its file name in the server's DAGs folder. */
  readonly dag: string;
  readonly params?: string | undefined;
  readonly dagRunId?: string | undefined;
  readonly queue?: string | undefined;
}

/**
 * The `{fileName}` of a DAG argument: `etl`, or `etl.yaml` with the extension dropped; a path
 * names a local file, which a server does not have.
 */
const fileNameOf = (dag: string): string | ApiError =>
  dag.includes('/') || dag.includes('\\')
    ? new ApiError(
        `with --server, name a DAG of the server's DAGs folder (e.g. etl), not the path ${JSON.stringify(dag)}`,
        ExitCode.Usage,
      )
    : dag.replace(/\.ya?ml$/, '');

/** Runs a DAG on a server: POST .../start or .../enqueue, then optionally waits and reports. */
export const remoteStart = async (
  io: CliIo,
  c: ClientChoice & { server: string },
  req: RemoteStart,
): Promise<ExitCode> => {
  const o = outputOf(io, c.json);
  try {
    const fileName = fileNameOf(req.dag);
    if (fileName instanceof ApiError) throw fileName;
    const client = new ApiClient(c.server, c.token);
    const dagRunId = await client.call(
      'POST',
      `/dags/${encodeURIComponent(fileName)}/${req.kind}`,
      { schema: RUN_ID_ANSWER, key: 'dagRunId' },
      {
        ...(req.params !== undefined ? { params: req.params } : {}),
        ...(req.dagRunId !== undefined ? { dagRunId: req.dagRunId } : {}),
        ...(req.queue !== undefined ? { queue: req.queue } : {}),
      },
    );
    // the run endpoints take the DAG's name, which may differ from its file name
    const dagRun = await client.call(
      'GET',
      `/dags/${encodeURIComponent(fileName)}/dag-runs/${encodeURIComponent(dagRunId)}`,
      // the wire schemas (zod) load here, not with `trellis --help`
      { schema: (await import('../runs/wire-schemas.js')).RunDetailsSchema, key: 'dagRun' },
    );
    const queued = dagRun.status === RunStatus.Queued;
    o.out(
      `run ${dagRunId} of DAG "${dagRun.name}" ${queued ? `queued in its queue` : 'started'} on ${client.base}`,
    );
    if (!c.wait) {
      o.json(dagRun);
      return ExitCode.Ok;
    }
    return await awaitAndReport(remoteRunSource(client), { name: dagRun.name, dagRunId }, o, c);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    io.err(`trellis ${req.kind}: ${e.message}`);
    return e.exitCode;
  }
};
