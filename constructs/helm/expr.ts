/**
 * Typed Helm placeholders.
 *
 * A chart template is a cdk8s construct tree whose leaves may be `HelmExpr`
 * values instead of literals. A `HelmExpr<T>` stands for a Go-template pipeline
 * that Helm evaluates at install time and that yields a `T`, so the TypeScript
 * compiler checks that `.Values.controller.replicas` lands in an integer field
 * and `.Values.controller.resources` in a ResourceRequirements field.
 *
 * cdk8s resolves any object with a `resolve()` method (its ImplicitTokenResolver),
 * so a placeholder travels through `ApiObject.toJson()` as an opaque marker
 * string; the chart writer's YAML emitter decodes it back into a node and renders
 * the pipeline. Nothing is ever string-replaced in rendered YAML.
 */

/** How the emitter writes a placeholder into YAML. */
export type RenderMode =
  /** a string scalar: `{{ <pipeline> | quote }}` */
  | 'string'
  /** an integer scalar: `{{ <pipeline> | int }}` */
  | 'int'
  /** a boolean scalar: `{{ <pipeline> }}` */
  | 'bool'
  /** a whole YAML subtree: `{{- toYaml <pipeline> | nindent N }}` */
  | 'block';

const MARK_START = '\uE000';
const MARK_END = '\uE001';

interface EncodedExpr {
  readonly pipeline: string;
  readonly mode: RenderMode;
}

/** A Go-template pipeline yielding a `T`, as one YAML value. */
export class HelmExpr<T> {
  /** Phantom field: keeps `HelmExpr<number>` and `HelmExpr<string>` apart for the compiler. */
  declare private readonly valueType?: T;

  constructor(
    /** The Go-template pipeline, without delimiters. */
    readonly pipeline: string,
    readonly mode: RenderMode,
  ) {}

  /** cdk8s ImplicitTokenResolver hook: the marker string the YAML emitter decodes. */
  resolve(): string {
    const encoded: EncodedExpr = { pipeline: this.pipeline, mode: this.mode };
    return MARK_START + JSON.stringify(encoded) + MARK_END;
  }
}

/** An operand in a pipeline: a reference to something Helm knows (`.Values.x`, `.Release.Namespace`). */
export class HelmOperand<T> {
  declare private readonly valueType?: T;
  constructor(readonly text: string) {}
}

/** Marker key of a conditional value; see `HelmConditional`. */
export const CONDITIONAL_KEY = '\uE000if';

/** The resolved form of a conditional: cdk8s keeps resolving inside it. */
export interface EncodedConditional {
  readonly condition: string;
  readonly then: unknown;
  readonly otherwise?: unknown;
}

/**
 * A map entry or list item that Helm renders only when a condition holds
 * (`{{- if }}` ... `{{- else }}` ... `{{- end }}` around it).
 */
export class HelmConditional<T> {
  declare private readonly valueType?: T;

  constructor(
    readonly condition: HelmOperand<unknown>,
    readonly then: Templated<T>,
    readonly otherwise?: Templated<T>,
  ) {}

  /** cdk8s ImplicitTokenResolver hook: a one-key marker map the emitter recognises. */
  resolve(): Record<string, EncodedConditional> {
    return { [CONDITIONAL_KEY]: { condition: this.condition.text, then: this.then, otherwise: this.otherwise } };
  }
}

/** Returns the conditional encoded in `value`, if it is one. */
export function decodeConditional(value: unknown): EncodedConditional | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return undefined;
  }
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === CONDITIONAL_KEY
    ? ((value as Record<string, EncodedConditional>)[CONDITIONAL_KEY] as EncodedConditional)
    : undefined;
}

/** Decodes a marker string written by `HelmExpr.resolve()`; returns undefined for ordinary strings. */
export function decodeHelmExpr(value: string): EncodedExpr | undefined {
  if (!value.includes(MARK_START)) {
    return undefined;
  }
  if (value.startsWith(MARK_START) && value.endsWith(MARK_END) && value.indexOf(MARK_START, 1) === -1) {
    return JSON.parse(value.slice(1, -1)) as EncodedExpr;
  }
  throw new Error(
    `a Helm placeholder was concatenated into a string (${JSON.stringify(value.replace(/[\uE000\uE001]/g, ''))}); ` +
      'build the string with Helm.printf instead',
  );
}

/** Builtin objects Helm passes to every template. */
export const Release = {
  name: new HelmOperand<string>('.Release.Name'),
  namespace: new HelmOperand<string>('.Release.Namespace'),
  service: new HelmOperand<string>('.Release.Service'),
} as const;

export const ChartInfo = {
  name: new HelmOperand<string>('.Chart.Name'),
  version: new HelmOperand<string>('.Chart.Version'),
  appVersion: new HelmOperand<string>('.Chart.AppVersion'),
} as const;

/** `.Capabilities`: what the target cluster serves. */
export const Capabilities = {
  /** True when the cluster serves `<group>/<version>/<Kind>` (or `<version>/<Kind>` for the core group). */
  hasApi(groupVersionKind: string): HelmOperand<boolean> {
    return new HelmOperand<boolean>(`.Capabilities.APIVersions.Has ${goString(groupVersionKind)}`);
  },
} as const;

/** `helm.sh/chart` label value, the way `helm create` spells it. */
export const chartLabel = new HelmOperand<string>('printf "%s-%s" .Chart.Name (.Chart.Version | replace "+" "_")');

type Scalar = string | number | boolean;

/** Renderers: turn an operand into a YAML value of the matching type. */
export const Helm = {
  str(operand: HelmOperand<string>): HelmExpr<string> {
    return new HelmExpr<string>(operand.text, 'string');
  },
  int(operand: HelmOperand<number>): HelmExpr<number> {
    return new HelmExpr<number>(operand.text, 'int');
  },
  bool(operand: HelmOperand<boolean>): HelmExpr<boolean> {
    return new HelmExpr<boolean>(operand.text, 'bool');
  },
  /** A whole subtree (a map or a list) copied from values with `toYaml`. */
  yaml<T extends object>(operand: HelmOperand<T>): HelmExpr<T> {
    return new HelmExpr<T>(operand.text, 'block');
  },
  /** Renders `then` when `condition` is truthy, else `otherwise` (or nothing). */
  when<T>(
    condition: HelmOperand<unknown>,
    then: Templated<NoInfer<T>>,
    otherwise?: Templated<NoInfer<T>>,
  ): HelmConditional<T> {
    return new HelmConditional<T>(condition, then, otherwise);
  },
  /**
   * A string assembled by Go's `printf`; literals are escaped here, operands are
   * Helm references, so the result is always one quoted YAML scalar.
   */
  printf(format: string, ...operands: HelmOperand<Scalar>[]): HelmExpr<string> {
    return Helm.str(Pipeline.printf(format, ...operands));
  },
} as const;

/** A Go string literal (double-quoted, Go escapes are a superset of what JSON produces here). */
function goString(s: string): string {
  return JSON.stringify(s);
}

/** Dotted paths into a values type: `'controller' | 'controller.replicas' | ...`. */
export type ValuePath<T> = T extends readonly unknown[]
  ? never
  : T extends object
    ? {
        [K in keyof T & string]: NonNullable<T[K]> extends readonly unknown[]
          ? K
          : NonNullable<T[K]> extends object
            ? K | `${K}.${ValuePath<NonNullable<T[K]>>}`
            : K;
      }[keyof T & string]
    : never;

/** The type found at a dotted path. */
export type PathValue<T, P extends string> = P extends `${infer K}.${infer Rest}`
  ? K extends keyof T
    ? PathValue<NonNullable<T[K]>, Rest>
    : never
  : P extends keyof T
    ? T[P]
    : never;

/** Returns a typed accessor for `.Values` of a chart whose values have type `V`. */
export function valuesOf<V>(): <P extends ValuePath<V>>(path: P) => HelmOperand<PathValue<V, P>> {
  return (path) => {
    const segments = String(path).split('.');
    const text = segments.every((s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s))
      ? `.Values.${segments.join('.')}`
      : `(index .Values ${segments.map(goString).join(' ')})`;
    return new HelmOperand(text);
  };
}

/**
 * A value that may be a literal or a placeholder anywhere in the tree: the type
 * of a template body. Arrays and objects may be replaced whole (`Helm.yaml`) or
 * element by element.
 */
export type Templated<T> =
  | HelmExpr<T>
  | HelmConditional<T>
  | (T extends readonly (infer U)[]
      ? Templated<U>[]
      : T extends object
        ? { [K in keyof T]: Templated<T[K]> }
        : T);

/** Pipeline combinators for conditions and fallbacks. */
export const Pipeline = {
  /** A string assembled by Go's `printf`, for use inside another pipeline (see `Helm.printf`). */
  printf(format: string, ...operands: HelmOperand<Scalar>[]): HelmOperand<string> {
    const expected = (format.replace(/%%/g, '').match(/%[vsdt]/g) ?? []).length;
    if (expected !== operands.length) {
      throw new Error(`printf format ${JSON.stringify(format)} takes ${expected} operands, got ${operands.length}`);
    }
    return new HelmOperand<string>(['printf', goString(format), ...operands.map(operandArg)].join(' '));
  },
  /** `value` when non-empty, else `fallback` (Sprig `default`). */
  orDefault<T>(value: HelmOperand<T>, fallback: HelmOperand<T>): HelmOperand<T> {
    return new HelmOperand<T>(`default ${operandArg(fallback)} ${operandArg(value)}`);
  },
  and(...operands: HelmOperand<unknown>[]): HelmOperand<boolean> {
    return new HelmOperand<boolean>(`and ${operands.map(operandArg).join(' ')}`);
  },
  ne<T>(a: HelmOperand<T>, b: HelmOperand<T>): HelmOperand<boolean> {
    return new HelmOperand<boolean>(`ne ${operandArg(a)} ${operandArg(b)}`);
  },
  /**
   * `value` as JSON text (Sprig `toJson`). A JSON list or map of strings is also a
   * CEL literal: every escape Go's encoder writes (`\"`, `\\`, `\n`, `\u003c`, ...) is a CEL
   * escape too, so values reach an admission expression without string-pasting.
   */
  /** A list's elements joined by `separator` (Sprig `join`). */
  join(separator: string, list: HelmOperand<readonly string[]>): HelmOperand<string> {
    return new HelmOperand<string>(`join ${goString(separator)} ${operandArg(list)}`);
  },
  toJson<T>(value: HelmOperand<T>): HelmOperand<string> {
    return new HelmOperand<string>(`toJson ${operandArg(value)}`);
  },
} as const;

function operandArg(o: HelmOperand<unknown>): string {
  return /^[.$][\w.]*$/.test(o.text) ? o.text : `(${o.text})`;
}
