import { describe, expect, it } from 'vitest';
import { configErrorOf, useConfigHome } from '../../test/support/config-home.js';

/** `database.poolSize` (issue 20, item 2: "a connection pool whose size is in config"). */
const { writeConfig, load } = useConfigHome();

const URL = 'postgres://trellis:secret@127.0.0.1:5432/trellis';
const HINT = 'use an integer of at least 1, e.g. 10';

describe('database.poolSize', () => {
  it('defaults to 10 connections when only the URL is set', () => {
    expect(load({ SVC_DATABASE_URL: URL }).config.database?.poolSize).toBe(10);
  });

  it('reads database.poolSize from the YAML file', async () => {
    await writeConfig(`database:\n  url: ${URL}\n  poolSize: 3\n`);
    expect(load().config.database).toMatchObject({ url: URL, poolSize: 3 });
  });

  it('reads SVC_DATABASE_POOL_SIZE, which wins over the file', async () => {
    await writeConfig(`database:\n  url: ${URL}\n  poolSize: 3\n`);
    expect(load({ SVC_DATABASE_POOL_SIZE: '7' }).config.database?.poolSize).toBe(7);
  });

  const envError = (v: string): string =>
    configErrorOf(() => load({ SVC_DATABASE_URL: URL, SVC_DATABASE_POOL_SIZE: v })).message;

  it('rejects SVC_DATABASE_POOL_SIZE=0, naming the variable, the value and the fix', () => {
    expect(envError('0')).toBe(`SVC_DATABASE_POOL_SIZE: database.poolSize = 0 is invalid: ${HINT}`);
  });

  // variables take digits only (parse-setting.ts), so a sign or a word fails before the schema
  it.each(['-2', 'ten', '2.5'])('rejects SVC_DATABASE_POOL_SIZE="%s" as not an integer', (v) => {
    expect(envError(v)).toBe(
      `SVC_DATABASE_POOL_SIZE="${v}" is not an integer: use a whole number in digits, e.g. 30`,
    );
  });

  it.each([
    ['0', '0'],
    ['-1', '-1'],
    ['"many"', '"many"'],
    ['2.5', '2.5'],
  ])(
    'rejects poolSize: %s in the file, naming the file, the value and the fix',
    async (y, shown) => {
      const file = await writeConfig(`database:\n  url: ${URL}\n  poolSize: ${y}\n`);
      expect(configErrorOf(() => load()).message).toBe(
        `${file}: database.poolSize = ${shown} is invalid: ${HINT}`,
      );
    },
  );
});
