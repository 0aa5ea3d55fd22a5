import { describe, expect, it } from 'vitest';
import { splitParallelItems } from './items.js';

describe('splitParallelItems', () => {
  describe('JSON', () => {
    it('takes the elements of a JSON array of strings as they are', () => {
      expect(splitParallelItems('["a", " b ", "c d"]')).toEqual(['a', ' b ', 'c d']);
    });

    it('JSON-encodes non-string elements, with object keys sorted', () => {
      expect(splitParallelItems('[1, true, null, {"b":2,"a":{"d":1,"c":[3]}}, [1,"x"]]')).toEqual([
        '1',
        'true',
        'null',
        '{"a":{"c":[3],"d":1},"b":2}',
        '[1,"x"]',
      ]);
    });

    it('reads a JSON array spread over several lines as JSON, not as lines', () => {
      expect(splitParallelItems('[\n  "a",\n  "b"\n]\n')).toEqual(['a', 'b']);
    });

    it('takes a single JSON object as one item', () => {
      expect(splitParallelItems(' {"file": "a.csv", "n": 1} ')).toEqual([
        '{"file": "a.csv", "n": 1}',
      ]);
    });

    it('splits text that only looks like JSON as text', () => {
      expect(splitParallelItems('[a, b]')).toEqual(['[a', 'b]']);
      expect(splitParallelItems('{a;b}')).toEqual(['{a', 'b}']);
    });
  });

  describe('newlines', () => {
    it('splits by line, trimming and dropping blank lines', () => {
      expect(splitParallelItems('  one\n\ntwo  \r\n three, 3 \n')).toEqual([
        'one',
        'two',
        'three, 3',
      ]);
    });

    it('prefers newlines over every other separator', () => {
      expect(splitParallelItems('a,b,c\nd|e|f')).toEqual(['a,b,c', 'd|e|f']);
    });

    it('unquotes a fully quoted line', () => {
      expect(splitParallelItems('"a b"\n\'c\'')).toEqual(['a b', 'c']);
    });
  });

  describe('delimiters', () => {
    it('splits by tab', () => {
      expect(splitParallelItems('a b\tc d\te')).toEqual(['a b', 'c d', 'e']);
    });

    it('splits by |', () => {
      expect(splitParallelItems('x | y | z')).toEqual(['x', 'y', 'z']);
    });

    it('splits by ;', () => {
      expect(splitParallelItems('x;y;z')).toEqual(['x', 'y', 'z']);
    });

    it('splits by ,', () => {
      expect(splitParallelItems('x, y ,z')).toEqual(['x', 'y', 'z']);
    });

    it('uses the most frequent delimiter', () => {
      expect(splitParallelItems('a;b,c;d,e,f')).toEqual(['a;b', 'c;d', 'e', 'f']);
      expect(splitParallelItems('k=1,2|k=3,4|k=5')).toEqual(['k=1,2', 'k=3,4', 'k=5']);
    });

    it('breaks a tie in the order tab, |, ;, ,', () => {
      expect(splitParallelItems('a,b;c')).toEqual(['a,b', 'c']);
      expect(splitParallelItems('a;b|c')).toEqual(['a;b', 'c']);
      expect(splitParallelItems('a|b\tc')).toEqual(['a|b', 'c']);
    });

    it('does not split inside quoted strings, and unquotes them', () => {
      expect(splitParallelItems('"a,b", c ,\'d,e\'')).toEqual(['a,b', 'c', 'd,e']);
    });

    it('does not count delimiters inside quoted strings', () => {
      expect(splitParallelItems('"a,b,c";d;e')).toEqual(['a,b,c', 'd', 'e']);
    });

    it('unescapes \\" inside a double-quoted item', () => {
      expect(splitParallelItems('"say \\"hi\\", ok",x')).toEqual(['say "hi", ok', 'x']);
    });

    it('treats an apostrophe inside a word and an unclosed quote as text', () => {
      expect(splitParallelItems("don't,won't")).toEqual(["don't", "won't"]);
      expect(splitParallelItems('"a,b')).toEqual(['"a', 'b']);
    });

    it('drops empty items between delimiters', () => {
      expect(splitParallelItems('a,,b, ,')).toEqual(['a', 'b']);
    });
  });

  describe('spaces', () => {
    it('splits by blanks when no other rule applies', () => {
      expect(splitParallelItems('  a   b c ')).toEqual(['a', 'b', 'c']);
    });

    it('keeps a quoted string with blanks together', () => {
      expect(splitParallelItems('"a b" c \'d e\'')).toEqual(['a b', 'c', 'd e']);
    });

    it('gives a single word as one item', () => {
      expect(splitParallelItems('only')).toEqual(['only']);
    });
  });

  it('gives no items for empty or blank text', () => {
    expect(splitParallelItems('')).toEqual([]);
    expect(splitParallelItems(' \n\t ')).toEqual([]);
    expect(splitParallelItems('[]')).toEqual([]);
  });
});
