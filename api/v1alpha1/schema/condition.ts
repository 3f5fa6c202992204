/** The standard `metav1.Condition` schema, as controller-gen emits it. */
import { Type, type Static } from '@sinclair/typebox';
import { ListMap, StringEnum } from '../../typebox/schema.js';

export const Condition = Type.Object(
  {
    lastTransitionTime: Type.String({
      format: 'date-time',
      description: 'When the condition last changed from one status to another.',
    }),
    message: Type.String({ maxLength: 32768, description: 'Human-readable details about the transition.' }),
    observedGeneration: Type.Optional(
      Type.Integer({
        format: 'int64',
        minimum: 0,
        description: 'The .metadata.generation the condition was set for.',
      }),
    ),
    reason: Type.String({
      maxLength: 1024,
      minLength: 1,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: "Programmatic identifier for the condition's last transition, in CamelCase.",
    }),
    status: StringEnum(['True', 'False', 'Unknown'] as const, { description: 'Status of the condition.' }),
    type: Type.String({
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      description: 'Type of condition in CamelCase.',
    }),
  },
  { description: 'One aspect of the current state of the object.' },
);
export type Condition = Static<typeof Condition>;

export const Conditions = ListMap(Condition, ['type'], {
  description: 'The latest observations of the object, one per condition type.',
});
