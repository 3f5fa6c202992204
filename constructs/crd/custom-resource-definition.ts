/** A CustomResourceDefinition generated from a typed kind definition. */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { KindDefinition } from '../../api/typebox/kind.js';
import { toOpenApi } from '../../api/typebox/schema.js';

export interface CustomResourceDefinitionProps {
  /** The kind to define. */
  readonly definition: KindDefinition;
  /**
   * Labels on the CRD object.
   * @default none
   */
  readonly labels?: Record<string, string>;
}

export class CustomResourceDefinition extends Construct {
  /** The complete `openAPIV3Schema` of a kind, as the apiserver validates it. */
  static openApiSchema(definition: KindDefinition): Record<string, unknown> {
    const properties: Record<string, unknown> = {
      apiVersion: {
        type: 'string',
        description: 'The versioned schema of this representation of an object.',
      },
      kind: {
        type: 'string',
        description: 'The REST resource this object represents.',
      },
      metadata: { type: 'object' },
      spec: { ...toOpenApi(definition.spec), description: definition.specDescription },
    };
    if (definition.status) {
      properties.status = { ...toOpenApi(definition.status), description: definition.statusDescription };
    }
    const validations = definition.validations?.length ? { 'x-kubernetes-validations': definition.validations.map((v) => ({ ...v })) } : {};
    return { type: 'object', description: definition.description, properties, ...validations };
  }

  readonly apiObject: ApiObject;
  readonly name: string;

  constructor(scope: Construct, id: string, props: CustomResourceDefinitionProps) {
    super(scope, id);
    const def = props.definition;
    this.name = `${def.plural}.${def.group}`;
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: this.name, labels: props.labels },
      spec: {
        group: def.group,
        names: {
          kind: def.kind,
          listKind: def.listKind,
          plural: def.plural,
          singular: def.singular,
          shortNames: [...def.shortNames],
          categories: [...def.categories],
        },
        scope: def.scope,
        versions: [
          {
            name: def.version,
            served: true,
            storage: true,
            schema: { openAPIV3Schema: CustomResourceDefinition.openApiSchema(def) },
            subresources: def.status ? { status: {} } : {},
            additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
          },
        ],
      },
    });
  }
}
