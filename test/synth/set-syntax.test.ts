import { describe, expect, it } from 'vitest';
import { overrideTree, parseSetArgument, typedValue } from '../../synth/set-syntax.js';

describe("helm's --set grammar", () => {
  it('splits at unescaped commas and nests at unescaped dots', () => {
    expect(parseSetArgument('a.b=1,c=two')).toEqual([
      { key: 'a.b', path: ['a', 'b'], value: 1 },
      { key: 'c', path: ['c'], value: 'two' },
    ]);
    expect(parseSetArgument('a\\.b=1').map((a) => a.path)).toEqual([['a.b']]);
    expect(parseSetArgument('v=x\\,y').map((a) => a.value)).toEqual(['x,y']);
  });

  it('reads {a,b} lists and [n] indexes', () => {
    expect(parseSetArgument('l={x,2,true}')[0]!.value).toEqual(['x', 2, true]);
    expect(parseSetArgument('l={}')[0]!.value).toEqual([]);
    expect(parseSetArgument('l[1]=y')[0]!.path).toEqual(['l', 1]);
    expect(parseSetArgument('a[0][1].b=2')[0]!.path).toEqual(['a', 0, 1, 'b']);
    expect(overrideTree(['l', 1, 'name'], 'y')).toEqual({ l: [null, { name: 'y' }] });
  });

  it("types values as helm does (floats and leading zeros stay strings), and --set-string keeps strings", () => {
    expect(['true', 'FALSE', 'null', '0', '-3', '12', '1.5', '007', '', '1e3'].map((v) => typedValue(v, false))).toEqual([
      true, false, null, 0, -3, 12, '1.5', '007', '', '1e3',
    ]);
    expect(parseSetArgument('a=1,b=true', { asString: true }).map((a) => a.value)).toEqual(['1', 'true']);
  });

  it.each([
    ['a', 'key "a" has no value (expected key=value)'],
    ['a,b=1', 'key "a" has no value (expected key=value)'],
    ['a..b=1', 'key "a." has an empty name part'],
    ['[0]=1', 'key "" has an empty name part'],
    ['a[x]=1', 'key "a[x]": index "x" is not a list index from 0 to 65536'],
    ['a[1', 'key "a[1": unterminated [index]'],
    ['a[0]b=1', 'key "a[0]": expected "=", "." or "[" after the index'],
    ['l={a,b', 'key "l": list not closed with "}"'],
    ['l={a}x', 'key "l": expected "," after the list'],
    ['', 'no assignment (expected key=value)'],
  ])('refuses %j naming the key', (text, message) => {
    expect(() => parseSetArgument(text)).toThrow(message);
  });
});
