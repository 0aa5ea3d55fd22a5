import type {
  CoordinatorClient,
  LogAck,
  LogChunk,
  LogStream,
  StatusAck,
  StatusReport,
} from '@trellis/coordinator';

/** What the fake coordinator took, in order (`logs`: the chunks a status report carried). */
export type Sent =
  { kind: 'status'; seq: number; run: string; logs?: string[] } | { kind: 'logs'; data: string[] };

/** gRPC status codes the tests use. */
export const GrpcCode = { Internal: 13, Unavailable: 14, InvalidArgument: 3 } as const;

const grpcError = (code: number, message: string): Error =>
  Object.assign(new Error(message), { code });

/**
 * A coordinator client for outbox tests: records what it takes, can be away (UNAVAILABLE), fail
 * the next calls with a given gRPC code, or answer that a run is dropped.
 */
export const fakeCoordinatorClient = () => {
  const sent: Sent[] = [];
  const reports: StatusReport[] = [];
  const state = {
    away: false,
    dropped: new Set<string>(),
    /** The next calls fail with these codes, one each. */
    failures: [] as number[],
    /** Named in heartbeat replies (`client.takes`): none, as from an older coordinator. */
    features: [] as string[],
    /** Log chunks in a report are ignored, as by an older coordinator (`logsApplied` false). */
    ignoresReportLogs: false,
  };
  const fail = (): Error | undefined => {
    if (state.away) return grpcError(GrpcCode.Unavailable, 'away');
    const code = state.failures.shift();
    return code === undefined ? undefined : grpcError(code, `failure ${code}`);
  };
  /** Takes a stream of chunks, unless it failed when it was opened (`e`). */
  const take = (chunks: readonly LogChunk[], e: Error | undefined): Promise<LogAck> => {
    if (e) return Promise.reject(e);
    sent.push({ kind: 'logs', data: chunks.map((c) => c.data.toString()) });
    return Promise.resolve({ files: [] });
  };
  const client = {
    report: (r: StatusReport): Promise<StatusAck> => {
      const e = fail();
      if (e) return Promise.reject(e);
      const logs = state.ignoresReportLogs ? [] : (r.logs ?? []).map((c) => c.data.toString());
      sent.push({
        kind: 'status',
        seq: r.seq,
        run: r.run?.dagRunId ?? '',
        ...(logs.length > 0 ? { logs } : {}),
      });
      reports.push(r);
      return Promise.resolve({
        appliedSeq: r.seq,
        dropped: state.dropped.has(r.run?.dagRunId ?? ''),
        ...(state.ignoresReportLogs ? {} : { logsApplied: true }),
      });
    },
    takes: (feature: string) => state.features.includes(feature),
    sendLogs: (chunks: readonly LogChunk[]) => take(chunks, fail()),
    // one stream: fails as it opens (the coordinator away), or is taken whole at its end
    openLogs: (): LogStream => {
      const e = fail();
      const chunks: LogChunk[] = [];
      return { write: (c) => void chunks.push(c), end: () => take(chunks, e) };
    },
  } as unknown as CoordinatorClient;
  return { client, sent, reports, state };
};

/** A status report of run `run` with sequence number `seq`. */
export const reportOf = (run: string, seq: number): StatusReport => ({
  workerId: 'w',
  run: { name: 'd', dagRunId: run },
  root: { name: 'd', dagRunId: run },
  seq,
  recordJson: JSON.stringify({ dagRunId: run, seq }),
  snapshotJson: '',
});

/** A chunk of run `run`'s stdout at `offset`. */
export const chunkOf = (run: string, offset: number, data: string): LogChunk => ({
  workerId: 'w',
  run: { name: 'd', dagRunId: run },
  root: { name: 'd', dagRunId: run },
  path: `/logs/${run}.out`,
  offset,
  data: Buffer.from(data),
});
