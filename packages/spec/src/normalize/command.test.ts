import { describe, expect, it } from 'vitest';
import { splitCommandLine } from './command.js';

describe('splitCommandLine', () => {
  it('splits words on any run of spaces and tabs', () => {
    expect(splitCommandLine('echo  hello\tworld ')).toEqual(['echo', 'hello', 'world']);
  });

  it('returns no words for an empty or blank line', () => {
    expect(splitCommandLine('')).toEqual([]);
    expect(splitCommandLine('   ')).toEqual([]);
  });

  it('keeps single-quoted text literally, backslashes and dollars included', () => {
    expect(splitCommandLine(`printf '%s\\n' '$HOME and \\"x\\"'`)).toEqual([
      'printf',
      '%s\\n',
      '$HOME and \\"x\\"',
    ]);
  });

  it('unescapes \\", \\\\, \\$ and \\` inside double quotes and keeps other backslashes', () => {
    expect(splitCommandLine('echo "say \\"hi\\" \\\\ \\$X \\` \\n"')).toEqual([
      'echo',
      'say "hi" \\ $X ` \\n',
    ]);
  });

  it('escapes the next character with a backslash outside quotes', () => {
    expect(splitCommandLine('ls my\\ file\\"s')).toEqual(['ls', 'my file"s']);
  });

  it('joins quoted and unquoted parts that touch into one word', () => {
    expect(splitCommandLine(`a"b c"d'e f'g`)).toEqual(['ab cde fg']);
  });

  it('keeps an empty quoted word', () => {
    expect(splitCommandLine(`echo "" ''`)).toEqual(['echo', '', '']);
  });

  it('keeps a trailing lone backslash as text', () => {
    expect(splitCommandLine('echo a\\')).toEqual(['echo', 'a\\']);
  });

  it('keeps variable references and backticks as written', () => {
    expect(splitCommandLine('echo ${NAME} `date +%F` $1')).toEqual([
      'echo',
      '${NAME}',
      '`date',
      '+%F`',
      '$1',
    ]);
  });

  it('returns undefined when a double or single quote is not closed', () => {
    expect(splitCommandLine('echo "hello')).toBeUndefined();
    expect(splitCommandLine("echo 'hello")).toBeUndefined();
    expect(splitCommandLine('echo "a\\"')).toBeUndefined();
  });
});
