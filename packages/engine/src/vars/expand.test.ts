import { describe, expect, it } from 'vitest';
import { expandVarsSync, lookupVar } from './expand.js';
import { expandVars } from './expand-commands.js';

const JSON_VALUE = JSON.stringify({
  name: 'bob',
  age: 42,
  ok: true,
  none: null,
  tags: ['a', 'b'],
  rows: [
    {
      id: 1,
      cells: [
        [10, 11],
        [20, 21],
      ],
    },
    { id: 2, cells: [] },
  ],
  meta: { k: 'v' },
  'dotted.key': 'dk',
});

describe('lookupVar', () => {
  it('returns the value from the first scope that defines the name', () => {
    expect(lookupVar([{ A: 'near' }, { A: 'far', B: 'b' }], 'A')).toBe('near');
    expect(lookupVar([{ A: 'near' }, { A: 'far', B: 'b' }], 'B')).toBe('b');
  });

  it('never reads inherited object properties', () => {
    expect(lookupVar([{}], 'constructor')).toBeUndefined();
    expect(lookupVar([{}], 'toString')).toBeUndefined();
  });
});

describe('expandVarsSync', () => {
  it('expands ${NAME} and $NAME', () => {
    expect(expandVarsSync('a=${A} b=$B', [{ A: '1', B: '2' }])).toBe('a=1 b=2');
  });

  it('lets the nearest scope win for a name defined in several', () => {
    const scopes = [{ X: 'step' }, { X: 'dag', Y: 'dag-y' }, { X: 'system', Z: 'sys-z' }];
    expect(expandVarsSync('$X ${Y} $Z', scopes)).toBe('step dag-y sys-z');
  });

  it('counts a scope that defines a name as empty as defining it', () => {
    expect(expandVarsSync('[${X}]', [{ X: '' }, { X: 'far' }])).toBe('[]');
  });

  it('leaves unknown names as written, in both forms', () => {
    expect(expandVarsSync('$NOPE ${NOPE} ${NOPE.a}', [{ A: '1' }])).toBe('$NOPE ${NOPE} ${NOPE.a}');
  });

  it('ends a bare name at the first character that cannot be part of it', () => {
    expect(expandVarsSync('$A-x $A.b ${A}B $AB', [{ A: '1' }])).toBe('1-x 1.b 1B $AB');
  });

  it('expands positional params $1 and ${1}, and ${10} only in braces', () => {
    const scopes = [{ '1': 'one', '2': 'two', '10': 'ten' }];
    expect(expandVarsSync('$1 ${2} ${10} $10', scopes)).toBe('one two ten one0');
  });

  it('turns \\$ into a literal dollar without expanding it', () => {
    expect(expandVarsSync('cost \\$A and \\${A}', [{ A: '1' }])).toBe('cost $A and ${A}');
  });

  it('keeps \\$ as written when keepEscapes is set', () => {
    expect(expandVarsSync('\\$A $A', [{ A: '1' }], { keepEscapes: true })).toBe('\\$A 1');
  });

  it('keeps an escaped backslash, so \\\\$A still expands A', () => {
    expect(expandVarsSync('\\\\$A', [{ A: '1' }])).toBe('\\\\1');
  });

  it("leaves '$X' and '${X}' in single quotes alone", () => {
    expect(expandVarsSync("echo '$X' '${X}' '${J.a}' $X", [{ X: 'x', J: '{"a":1}' }])).toBe(
      "echo '$X' '${X}' '${J.a}' x",
    );
  });

  it('expands a reference that only touches one single quote', () => {
    expect(expandVarsSync("it's $X", [{ X: 'x' }])).toBe("it's x");
  });

  it('leaves a lone $ and an empty ${} as written', () => {
    expect(expandVarsSync('$ 5$ ${} $-', [{ A: '1' }])).toBe('$ 5$ ${} $-');
  });

  it('returns text without a dollar unchanged', () => {
    expect(expandVarsSync('plain `text`', [{ A: '1' }])).toBe('plain `text`');
  });

  it('does not expand again inside an inserted value', () => {
    expect(expandVarsSync('$A', [{ A: '$B', B: 'no' }])).toBe('$B');
  });

  describe('JSON paths', () => {
    const scopes = [{ J: JSON_VALUE }];

    it('prints a string or number at a path plainly', () => {
      expect(expandVarsSync('${J.name} is ${J.age}', scopes)).toBe('bob is 42');
    });

    it('prints booleans and null plainly', () => {
      expect(expandVarsSync('${J.ok} ${J.none}', scopes)).toBe('true null');
    });

    it('reads into nested arrays', () => {
      expect(expandVarsSync('${J.rows[0].cells[1][0]} ${J.rows[1].id}', scopes)).toBe('20 2');
    });

    it('reads an array element with a dotted index and a negative index', () => {
      expect(expandVarsSync('${J.tags.1} ${J.tags[-1]} ${J.rows[-2].id}', scopes)).toBe('b b 1');
    });

    it('reads a key containing dots through a quoted bracket', () => {
      expect(expandVarsSync('${J["dotted.key"]}', scopes)).toBe('dk');
    });

    it('prints arrays and objects as compact JSON, not Go %v', () => {
      expect(expandVarsSync('${J.tags} ${J.meta} ${J.rows[1].cells}', scopes)).toBe(
        '["a","b"] {"k":"v"} []',
      );
    });

    it('reads into a top-level JSON array', () => {
      expect(expandVarsSync('${A[1].x}', [{ A: '[{"x":1},{"x":2}]' }])).toBe('2');
    });

    it('leaves the reference unchanged for a missing key or index', () => {
      expect(expandVarsSync('${J.nope} ${J.tags[5]} ${J.name.first} ${J.tags.x}', scopes)).toBe(
        '${J.nope} ${J.tags[5]} ${J.name.first} ${J.tags.x}',
      );
    });

    it('leaves the reference unchanged when the value is not JSON', () => {
      expect(expandVarsSync('${T.a}', [{ T: 'not json' }])).toBe('${T.a}');
    });

    it('leaves the reference unchanged for a malformed path', () => {
      expect(expandVarsSync('${J..name} ${J.tags[x]} ${J.}', scopes)).toBe(
        '${J..name} ${J.tags[x]} ${J.}',
      );
    });

    it('keeps a string result plain between double quotes', () => {
      expect(expandVarsSync('echo "${J.name}" "${J.age}"', scopes)).toBe('echo "bob" "42"');
    });

    it('prefers a scope key spelled with the dots, such as a step-id reference', () => {
      expect(
        expandVarsSync('${s1.stdout}', [{ 's1.stdout': '/logs/s1.out', s1: '{"stdout":1}' }]),
      ).toBe('/logs/s1.out');
    });

    it('reads a child DAG output through .outputs.NAME', () => {
      const child = JSON.stringify(
        { name: 'child', params: '', outputs: { RESULT: 'done' } },
        null,
        2,
      );
      expect(expandVarsSync('${OUT.outputs.RESULT}', [{ OUT: child }])).toBe('done');
    });
  });
});

describe('expandVars', () => {
  /** A fake command runner: records the commands and answers from a table. */
  const fakeShell = (answers: Record<string, string>) => {
    const ran: string[] = [];
    const run = (command: string): Promise<string> => {
      ran.push(command);
      return Promise.resolve(answers[command] ?? '');
    };
    return { ran, run };
  };

  it('expands like expandVarsSync when no backtick runner is given', async () => {
    await expect(expandVars('`echo $A`', [{ A: '1' }])).resolves.toBe('`echo 1`');
  });

  it('replaces a backtick command by its trimmed output', async () => {
    const shell = fakeShell({ date: '  2026-01-02\n' });
    await expect(expandVars('day=`date`!', [], { backticks: shell.run })).resolves.toBe(
      'day=2026-01-02!',
    );
  });

  it('expands variables inside a backtick command before running it', async () => {
    const shell = fakeShell({ 'echo hello-bob': 'hello-bob\n' });
    const scopes = [{ WHO: 'bob', J: '{"greet":"hello"}' }];
    await expect(
      expandVars('say `echo ${J.greet}-$WHO` to $WHO', scopes, { backticks: shell.run }),
    ).resolves.toBe('say hello-bob to bob');
    expect(shell.ran).toEqual(['echo hello-bob']);
  });

  it('runs several commands left to right, one at a time', async () => {
    const order: string[] = [];
    let running = 0;
    const run = async (command: string): Promise<string> => {
      running++;
      expect(running).toBe(1);
      order.push(command);
      await Promise.resolve();
      running--;
      return command.toUpperCase();
    };
    await expect(expandVars('`a`-`b`-`c`', [], { backticks: run })).resolves.toBe('A-B-C');
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('never runs backticks that come from a variable value', async () => {
    const shell = fakeShell({});
    await expect(expandVars('v=$V', [{ V: '`rm -rf /`' }], { backticks: shell.run })).resolves.toBe(
      'v=`rm -rf /`',
    );
    expect(shell.ran).toEqual([]);
  });

  it('leaves an unclosed backtick and an empty pair as text', async () => {
    const shell = fakeShell({});
    await expect(expandVars('a `` b `c $A', [{ A: '1' }], { backticks: shell.run })).resolves.toBe(
      'a `` b `c 1',
    );
    expect(shell.ran).toEqual([]);
  });

  it('turns an escaped backtick into a literal one', async () => {
    const shell = fakeShell({});
    await expect(expandVars('\\`x\\` $A', [{ A: '1' }], { backticks: shell.run })).resolves.toBe(
      '`x` 1',
    );
    expect(shell.ran).toEqual([]);
  });

  it('passes \\$ inside a command on as a plain $', async () => {
    const shell = fakeShell({ 'echo $HOME': '/root' });
    await expect(
      expandVars('`echo \\$HOME`', [{ HOME: 'nope' }], { backticks: shell.run }),
    ).resolves.toBe('/root');
  });

  it('rejects with the runner error when a command fails', async () => {
    const run = (): Promise<string> => Promise.reject(new Error('exit status 1'));
    await expect(expandVars('`false`', [], { backticks: run })).rejects.toThrow('exit status 1');
  });
});
