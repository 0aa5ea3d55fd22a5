/**
 * Problems from `POST /dags/validate` start with `line N:` when the parser knows the line
 * (spec package); those lines are marked in the editor. Problems without a line stay general.
 */
export interface LocatedProblem {
  readonly line: number | undefined;
  readonly message: string;
}

export const locateProblems = (errors: readonly string[]): LocatedProblem[] =>
  errors.map((e) => {
    const m = /^line (\d+)(?::\d+|, column \d+)?:\s*/.exec(e);
    return m
      ? { line: Number(m[1]), message: e.slice(m[0].length) }
      : { line: undefined, message: e };
  });

/** The set of 1-based line numbers that have a problem. */
export const problemLines = (problems: readonly LocatedProblem[]): Set<number> =>
  new Set(problems.flatMap((p) => (p.line === undefined ? [] : [p.line])));
