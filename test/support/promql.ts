/**
 * The series selectors of a PromQL / MetricsQL expression: each metric name it
 * reads and the labels it matches on. A scanner, not a parser: enough for the
 * expressions this project writes (vmalert-tool parses the rules for real), so
 * that a typo in a metric or label name fails a test instead of an alert
 * silently never firing. Grafana variables ($class, $__rate_interval) are skipped.
 */

export interface Matcher {
  readonly label: string;
  readonly op: string;
  readonly value: string;
}

export interface Selector {
  readonly name: string;
  readonly matchers: readonly Matcher[];
}

/** Words that are never a metric name where they stand. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'offset', 'bool', 'atan2', 'inf', 'nan', 'Inf', 'NaN']);
/** Modifiers followed by a list of label names. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** Aggregations, which may put `by (...)` between their name and `(`. */
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk']);

const IDENT_START = /[A-Za-z_:]/;
const IDENT = /[A-Za-z0-9_:]/;

export function selectors(expr: string): Selector[] {
  const out: Selector[] = [];
  let i = 0;
  const skipSpace = (from: number) => {
    let j = from;
    while (j < expr.length && /\s/.test(expr[j]!)) j++;
    return j;
  };
  const readString = (from: number): { value: string; end: number } => {
    const quote = expr[from]!;
    let j = from + 1;
    let value = '';
    while (j < expr.length && expr[j] !== quote) {
      if (expr[j] === '\\' && quote !== '`') {
        value += expr[j + 1] ?? '';
        j += 2;
      } else {
        value += expr[j++];
      }
    }
    if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
    return { value, end: j + 1 };
  };
  const readIdent = (from: number) => {
    let j = from;
    while (j < expr.length && IDENT.test(expr[j]!)) j++;
    return { ident: expr.slice(from, j), end: j };
  };
  const closing = (from: number, open: string, close: string) => {
    let depth = 0;
    for (let j = from; j < expr.length; j++) {
      if (expr[j] === '"' || expr[j] === "'" || expr[j] === '`') {
        j = readString(j).end - 1;
      } else if (expr[j] === open) {
        depth++;
      } else if (expr[j] === close && --depth === 0) {
        return j + 1;
      }
    }
    throw new Error(`unbalanced ${open}${close} in ${expr}`);
  };
  const readMatchers = (from: number): { matchers: Matcher[]; end: number } => {
    const matchers: Matcher[] = [];
    let j = skipSpace(from + 1);
    while (expr[j] !== '}') {
      const { ident: label, end } = readIdent(j);
      if (!label) throw new Error(`label name expected at ${j} in ${expr}`);
      j = skipSpace(end);
      const op = /^(=~|!~|!=|=)/.exec(expr.slice(j))?.[0];
      if (!op) throw new Error(`matcher operator expected at ${j} in ${expr}`);
      j = skipSpace(j + op.length);
      const { value, end: after } = readString(j);
      matchers.push({ label, op, value });
      j = skipSpace(after);
      if (expr[j] === ',') j = skipSpace(j + 1);
    }
    return { matchers, end: j + 1 };
  };

  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      i = readString(i).end;
    } else if (c === '[') {
      i = closing(i, '[', ']');
    } else if (c === '$') {
      i = expr[i + 1] === '{' ? closing(i + 1, '{', '}') : readIdent(i + 1).end;
    } else if (/[0-9.]/.test(c)) {
      while (i < expr.length && /[0-9A-Za-z.]/.test(expr[i]!)) i++;
    } else if (c === '{') {
      // A selector without a name outside the braces: {__name__="x", ...}.
      const { matchers, end } = readMatchers(i);
      const name = matchers.find((m) => m.label === '__name__' && m.op === '=')?.value;
      out.push({ name: name ?? '', matchers: matchers.filter((m) => m.label !== '__name__') });
      i = end;
    } else if (IDENT_START.test(c)) {
      const { ident, end } = readIdent(i);
      const next = skipSpace(end);
      if (LABEL_LISTS.has(ident)) {
        i = expr[next] === '(' ? closing(next, '(', ')') : end;
      } else if (KEYWORDS.has(ident) || expr[next] === '(' || AGGREGATIONS.has(ident)) {
        i = end;
      } else if (expr[next] === '{') {
        const { matchers, end: after } = readMatchers(next);
        out.push({ name: ident, matchers });
        i = after;
      } else {
        out.push({ name: ident, matchers: [] });
        i = end;
      }
    } else {
      i++;
    }
  }
  return out;
}
