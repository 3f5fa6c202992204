/**
 * Builders for Kubernetes structural schemas on top of TypeBox.
 *
 * One TypeBox schema per API field gives both the TypeScript type the
 * controllers use (`Static<typeof X>`) and the OpenAPI v3 schema the CRD
 * carries, so the two cannot drift apart.
 */
import { Type, type SchemaOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** One `x-kubernetes-validations` entry (a CEL rule). */
export interface ValidationRule {
  readonly rule: string;
  readonly message: string;
  /** The field the apiserver's error names (a rule above the field, e.g. one that reads status too). */
  readonly fieldPath?: string;
}

/** A string restricted to `values`, as a structural `enum` (TypeBox unions would emit anyOf). */
export function StringEnum<const V extends readonly string[]>(values: V, options: SchemaOptions = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A non-empty string (`minLength: 1`), the API's spelling of "required and meaningful". */
export function NonEmptyString(options: SchemaOptions = {}) {
  return Type.String({ ...options, minLength: 1 });
}

/** Adds the transition rule `self == oldSelf`: the field can be set once and never changed. */
export function Immutable<S extends TSchema>(schema: S, message: string): S {
  return withValidations(schema, [{ rule: 'self == oldSelf', message }]);
}

/** Appends CEL rules to a schema. */
export function withValidations<S extends TSchema>(schema: S, rules: readonly ValidationRule[]): S {
  const existing = (schema['x-kubernetes-validations'] as ValidationRule[] | undefined) ?? [];
  return { ...schema, 'x-kubernetes-validations': [...existing, ...rules] };
}

/** An opaque object whose content the apiserver keeps as written (Go `runtime.RawExtension`). */
export function PreservedObject(options: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

/** A list merged by key (`x-kubernetes-list-type: map`), as for conditions. */
export function ListMap<S extends TSchema>(item: S, keys: readonly string[], options: SchemaOptions = {}) {
  return Type.Array(item, { ...options, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [...keys] });
}

/** The schema as plain JSON: TypeBox's symbol-keyed bookkeeping removed. */
export function toOpenApi(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
