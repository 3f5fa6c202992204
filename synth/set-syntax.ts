/**
 * Helm's `--set` grammar (helm.sh/helm/v3/pkg/strvals), which is what users of
 * `helm install --set` already know:
 *
 *   a.b=1,c=two          several assignments, split at unescaped commas
 *   a\.b=1               an escaped dot (or comma, bracket, equals) is part of the key
 *   list={x,y}           a list
 *   list[1]=y            an index into a list (missing items are null)
 *   a=null               null (a key removed from the defaults, as in helm)
 *
 * Values are typed as helm types them: true/false, null, integers without a
 * leading zero; everything else (floats included) is a string. `--set-string`
 * keeps every value a string.
 */

/** One assignment: its key as written, its path, and its typed value. */
export interface SetAssignment {
  readonly key: string;
  readonly path: readonly (string | number)[];
  readonly value: unknown;
}

export class SetSyntaxError extends Error {}

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** helm's typedVal: strvals.go keeps "1.5" a string and "007" a string. */
export function typedValue(raw: string, asString: boolean): unknown {
  if (asString) {
    return raw;
  }
  const lower = raw.toLowerCase();
  if (lower === 'true') {
    return true;
  }
  if (lower === 'false') {
    return false;
  }
  if (lower === 'null') {
    return null;
  }
  if (INTEGER.test(raw) && Number.isSafeInteger(Number(raw))) {
    return Number(raw);
  }
  return raw;
}

/** Parses one `--set` (or `--set-string`) argument into its assignments. */
export function parseSetArgument(text: string, { asString = false }: { asString?: boolean } = {}): SetAssignment[] {
  const assignments: SetAssignment[] = [];
  let at = 0;
  const atEnd = () => at >= text.length;

  /** Reads until one of `stops` (unescaped); returns the text and the stop found (undefined at the end). */
  const readUntil = (stops: string): { text: string; stop?: string } => {
    let out = '';
    while (!atEnd()) {
      const ch = text[at]!;
      if (ch === '\\' && at + 1 < text.length) {
        out += text[at + 1];
        at += 2;
        continue;
      }
      if (stops.includes(ch)) {
        at++;
        return { text: out, stop: ch };
      }
      out += ch;
      at++;
    }
    return { text: out };
  };

  while (!atEnd()) {
    const start = at;
    const path: (string | number)[] = [];
    let stop: string | undefined;
    let value: unknown;
    for (;;) {
      const segment = readUntil('.=,[');
      stop = segment.stop;
      // An empty name is only the gap between two indexes (a[0][1]).
      if (segment.text === '' && !(stop === '[' && typeof path.at(-1) === 'number')) {
        throw new SetSyntaxError(`key ${JSON.stringify(text.slice(start, stop ? at - 1 : at))} has an empty name part`);
      }
      if (segment.text !== '') {
        path.push(segment.text);
      }
      if (stop === '.') {
        continue;
      }
      if (stop === '[') {
        const index = readUntil(']');
        if (index.stop !== ']') {
          throw new SetSyntaxError(`key ${JSON.stringify(text.slice(start))}: unterminated [index]`);
        }
        if (!/^[0-9]+$/.test(index.text) || Number(index.text) > 65536) {
          throw new SetSyntaxError(`key ${JSON.stringify(text.slice(start, at))}: index ${JSON.stringify(index.text)} is not a list index from 0 to 65536`);
        }
        path.push(Number(index.text));
        const next = text[at];
        if (next === '=') {
          at++;
          stop = '=';
        } else if (next === '.') {
          at++;
          continue;
        } else if (next === '[') {
          continue;
        } else {
          throw new SetSyntaxError(`key ${JSON.stringify(text.slice(start, at))}: expected "=", "." or "[" after the index`);
        }
      }
      if (stop !== '=') {
        throw new SetSyntaxError(`key ${JSON.stringify(text.slice(start, at - (stop ? 1 : 0)))} has no value (expected key=value)`);
      }
      break;
    }
    const key = text.slice(start, at - 1);
    if (text[at] === '{') {
      at++;
      const items: unknown[] = [];
      for (;;) {
        const item = readUntil(',}');
        if (item.stop === undefined) {
          throw new SetSyntaxError(`key ${JSON.stringify(key)}: list not closed with "}"`);
        }
        if (!(item.stop === '}' && item.text === '' && items.length === 0)) {
          items.push(typedValue(item.text, asString));
        }
        if (item.stop === '}') {
          break;
        }
      }
      value = items;
      if (!atEnd()) {
        if (text[at] !== ',') {
          throw new SetSyntaxError(`key ${JSON.stringify(key)}: expected "," after the list`);
        }
        at++;
      }
    } else {
      value = typedValue(readUntil(',').text, asString);
    }
    assignments.push({ key, path, value });
  }
  if (assignments.length === 0) {
    throw new SetSyntaxError('no assignment (expected key=value)');
  }
  return assignments;
}

type Tree = Record<string, unknown>;

/** The override tree one assignment makes: maps for names, lists (null-padded) for indexes. */
export function overrideTree(path: readonly (string | number)[], value: unknown): unknown {
  let node = value;
  for (let i = path.length - 1; i >= 0; i--) {
    const part = path[i]!;
    if (typeof part === 'number') {
      const list: unknown[] = Array.from({ length: part }, () => null);
      list.push(node);
      node = list;
    } else {
      node = { [part]: node } satisfies Tree;
    }
  }
  return node;
}
