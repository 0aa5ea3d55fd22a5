import { describe, expect, it } from 'vitest';
import { paramFields, paramsText } from './param-fields';

describe('param fields', () => {
  it('reads named and positional params and writes them back in order, quoted', () => {
    const fields = paramFields(['1=first', 'REGION=eu-west', 'NOTE=a "b" = c', '2=']);
    expect(fields).toEqual([
      { name: '1', value: 'first', positional: true },
      { name: 'REGION', value: 'eu-west', positional: false },
      { name: 'NOTE', value: 'a "b" = c', positional: false },
      { name: '2', value: '', positional: true },
    ]);
    expect(paramsText(fields)).toBe('"first" REGION="eu-west" NOTE="a \\"b\\" = c" ""');
  });
});
