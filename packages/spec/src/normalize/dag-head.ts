import type { YamlPath } from '../yaml/problem.js';
import type { Dag } from '../model/dag.js';
import { checkKeys, readMap, readString, readStringList, show, type Ctx } from './context.js';
import { baseNameOf, dagNameProblem } from './dag-name.js';
import { readContainer, readSsh } from './root-objects.js';

const at = (k: string): YamlPath => [k];

/** Where a DAG's name may come from besides the document (see NormalizeDagOptions). */
export interface DagNameSource {
  readonly location?: string;
  readonly name?: string;
  readonly isMain: boolean;
}

/** The fields read before the steps, in the order their problems are reported. */
export interface DagHead {
  readonly name: string | undefined;
  readonly type: 'chain' | 'graph' | undefined;
  readonly tags: string[];
  readonly container: Dag['container'];
  readonly ssh: Dag['ssh'];
  readonly dotenv: string[];
  readonly runConfig: Record<string, unknown>;
  readonly mailOn: Record<string, unknown>;
}

/** Name, type, tags, container/ssh, dotenv and the runConfig and mailOn mappings. */
export const readDagHead = (ctx: Ctx, m: Record<string, unknown>, opts: DagNameSource): DagHead => {
  const name = readDagName(ctx, m, opts);
  const type =
    m.type === undefined ? 'chain' : m.type === 'chain' || m.type === 'graph' ? m.type : undefined;
  if (type === undefined) ctx.report(at('type'), `must be "chain" or "graph", got ${show(m.type)}`);
  const tags = readTags(ctx, m);

  const container = readContainer(ctx, m.container, at('container'));
  const ssh = readSsh(ctx, m.ssh, at('ssh'), 'ssh');
  // The parsed values: `ssh: null` or `container: null` sets nothing, so it cannot conflict.
  if (container !== undefined && ssh !== undefined)
    ctx.report(
      at('ssh'),
      'ssh and container cannot both be set at DAG level: keep one, and set the other per step',
    );

  let dotenv = ['.env'];
  if (m.dotenv !== undefined && m.dotenv !== null)
    dotenv = readStringList(ctx, m.dotenv, at('dotenv')) ?? [];

  const runConfig = readMap(ctx, m.runConfig, at('runConfig'), 'runConfig') ?? {};
  checkKeys(ctx, runConfig, at('runConfig'), ['disableParamEdit', 'disableRunIdEdit'], 'runConfig');
  const mailOn = readMap(ctx, m.mailOn, at('mailOn'), 'mailOn') ?? {};
  checkKeys(ctx, mailOn, at('mailOn'), ['success', 'failure'], 'mailOn');
  return { name, type, tags, container, ssh, dotenv, runConfig, mailOn };
};

/** The DAG's name: the caller's, the document's own, or (first document) the file's. */
const readDagName = (
  ctx: Ctx,
  m: Record<string, unknown>,
  opts: DagNameSource,
): string | undefined => {
  const root: YamlPath = [];
  const ownName = readString(ctx, m.name, at('name'));
  let name = opts.name ?? ownName;
  if (name === undefined && opts.isMain && opts.location) name = baseNameOf(opts.location);
  // A later document of a multi-DAG file without a name is reported by parseDagFile, by number.
  if (name === undefined) {
    if (opts.isMain) ctx.report(root, 'this DAG has no name: add name: <name>');
  } else {
    const problem = dagNameProblem(name);
    const fromFileName = opts.name === undefined && ownName === undefined;
    if (problem && opts.name === undefined && ownName !== undefined)
      ctx.report(at('name'), problem);
    else if (problem)
      // A name from the file name or from the caller is not written in the file: no line.
      ctx.reportUnplaced(
        root,
        fromFileName
          ? `${problem}; it comes from the file name, so rename the file or add name: <name>`
          : problem,
      );
  }
  return name;
};

/** `tags`: a list, or comma-separated text; trimmed, empty ones dropped. */
const readTags = (ctx: Ctx, m: Record<string, unknown>): string[] => {
  let tags = readStringList(ctx, m.tags, at('tags')) ?? [];
  if (typeof m.tags === 'string') tags = m.tags.split(',');
  return tags.map((t) => t.trim()).filter((t) => t !== '');
};
