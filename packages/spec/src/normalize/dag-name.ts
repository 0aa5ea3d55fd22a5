import { show } from './context.js';

/** DAG names: at most 40 characters of letters, digits, `_`, `.` and `-` (spec: Errors, rule 2). */
export const DAG_NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;
export const DAG_NAME_MAX_LENGTH = 40;

/** `{fileName}` path parameters (spec: Endpoints). */
export const FILE_NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;

/** Why `name` is not a valid DAG name, or undefined when it is. The message names the fix. */
export const dagNameProblem = (name: string): string | undefined => {
  if (name === '') return 'DAG name is empty: use letters, digits, "_", "." or "-" (max 40)';
  if (name.length > DAG_NAME_MAX_LENGTH)
    return `invalid DAG name ${show(name)}: it has ${name.length} characters, at most ${DAG_NAME_MAX_LENGTH} are allowed`;
  if (!DAG_NAME_PATTERN.test(name))
    return `invalid DAG name ${show(name)}: use letters, digits, "_", "." or "-" (max 40)`;
  return undefined;
};

/** Whether `name` may name a DAG (see {@link dagNameProblem}). */
export const isValidDagName = (name: string): boolean => dagNameProblem(name) === undefined;

/** The file name without directory and `.yaml`/`.yml` extension. */
export const baseNameOf = (location: string): string =>
  (location.split(/[\\/]/).pop() ?? location).replace(/\.ya?ml$/i, '');
