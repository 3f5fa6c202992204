/** What a CustomResourceDefinition needs to know about one kind. */
import type { TSchema } from '@sinclair/typebox';
import type { ValidationRule } from './schema.js';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  /** 0 (or absent): shown by `kubectl get`; above 0: only with `-o wide`. */
  readonly priority?: number;
}

export interface KindDefinition {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  /** `kubectl get <short>`; chosen to clash with nothing built in or in Cozystack. */
  readonly shortNames: readonly string[];
  /** `kubectl get <category>` lists every kind in it. */
  readonly categories: readonly string[];
  readonly scope: 'Cluster' | 'Namespaced';
  readonly description: string;
  readonly spec: TSchema;
  readonly specDescription: string;
  /** Absent: no status field and no status subresource. */
  readonly status?: TSchema;
  readonly statusDescription?: string;
  readonly printerColumns: readonly PrinterColumn[];
  /** CEL rules on the whole object: those that read spec and status together. */
  readonly validations?: readonly ValidationRule[];
}

/** The `Age` column every kubebuilder CRD ends with. */
export const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
