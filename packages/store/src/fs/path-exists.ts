import { stat } from 'node:fs/promises';
import { isMissing } from './fs-errors.js';

/** True when something exists at `path`; false when it is missing. Errors: other fs errors. */
export const exists = async (path: string): Promise<boolean> => {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if (isMissing(e)) return false;
    throw e;
  }
};
