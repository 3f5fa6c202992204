/** The values every controller chart shares: image, replicas, probes, resources, placement. */
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { NonEmptyString, StringEnum } from '../../api/typebox/schema.js';
import { IMAGE_TAG_PATTERN, imageValues, type ImagePin } from '../images.js';

const closed = { additionalProperties: false } as const;
const QUANTITY = '^[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+|[KMGTPE]i?|[numkMGTPE])?$';

const Quantities = Type.Record(Type.String(), Type.String({ pattern: QUANTITY }), {
  description: 'Resource quantities, quoted (e.g. "10m", "64Mi").',
});

export const ImageSchema = Type.Object(
  {
    repository: NonEmptyString({ description: 'Image repository, without tag.' }),
    tag: Type.String({
      pattern: IMAGE_TAG_PATTERN,
      description: 'Tag and digest, <tag>@sha256:<64 hex>. A tag without digest is refused.',
    }),
    pullPolicy: StringEnum(['Always', 'IfNotPresent', 'Never'] as const, { description: 'Image pull policy.' }),
  },
  { ...closed, description: 'Controller image.' },
);

export const ControllerSchema = Type.Object(
  {
    replicas: Type.Integer({ minimum: 0, description: 'Number of controller pods; one leads at a time.' }),
    leaderElect: Type.Boolean({ description: 'Elect a leader through a Lease; keep on whenever replicas > 1.' }),
    metricsPort: Type.Integer({
      minimum: 0,
      maximum: 65535,
      description: 'Port of the plain-HTTP Prometheus endpoint /metrics; 0 disables it.',
    }),
    healthProbePort: Type.Integer({ minimum: 1, maximum: 65535, description: 'Port serving /healthz and /readyz.' }),
    logLevel: StringEnum(['debug', 'info', 'warn', 'error'] as const, { description: 'Log level of the JSON logs.' }),
    priorityClassName: Type.String({ description: 'PriorityClass of the pods; empty for the cluster default.' }),
    resources: Type.Object(
      { requests: Type.Optional(Quantities), limits: Type.Optional(Quantities) },
      { ...closed, description: 'Container resources.' },
    ),
    podAnnotations: Type.Record(Type.String(), Type.String(), { description: 'Extra pod annotations.' }),
    nodeSelector: Type.Record(Type.String(), Type.String(), { description: 'Node selector of the pods.' }),
    tolerations: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'Pod tolerations.' }),
    affinity: Type.Object({}, { additionalProperties: true, description: 'Pod affinity.' }),
  },
  {
    ...closed,
    description: 'Controller Deployment settings.',
    // Two pods without a Lease would both reconcile: more than one replica needs leader election.
    if: { properties: { leaderElect: { const: false } }, required: ['leaderElect'] },
    then: { properties: { replicas: { maximum: 1, description: 'more than one replica needs leaderElect: true' } } },
  },
);
export type ControllerValues = Static<typeof ControllerSchema>;

/** The values schema of a controller chart: the shared part plus chart-specific properties. */
export function controllerValuesSchema<P extends TProperties>(extra: P) {
  return Type.Object(
    {
      image: ImageSchema,
      imagePullSecrets: Type.Array(Type.Object({ name: NonEmptyString() }, closed), {
        description: 'Secrets for pulling the image.',
      }),
      controller: ControllerSchema,
      ...extra,
    },
    closed,
  );
}

/** The shared defaults, pinned to `image`. */
export function controllerDefaults(image: ImagePin) {
  return {
    image: { ...imageValues(image), pullPolicy: 'IfNotPresent' as const },
    imagePullSecrets: [] as { name: string }[],
    controller: {
      replicas: 1,
      leaderElect: true,
      metricsPort: 8080,
      healthProbePort: 8081,
      logLevel: 'info' as const,
      priorityClassName: '',
      // Sized from measured peaks (docs/benchmarks.md). The limit: on a real node, with 10,000 claims
      // and 20,000 unrelated Services, the Pods peak at 133 MiB (core) and 200 MiB (driver), 35 % and
      // 52 % of 384Mi (npm run bench:node holds them to 75 %); V8's heap ceiling follows it (259 MiB).
      // The request: a platform of up to 3,000 claims peaks at 99 and 116 MiB (npm run bench:e2e).
      resources: { requests: { cpu: '10m', memory: '128Mi' }, limits: { memory: '384Mi' } },
      podAnnotations: {} as Record<string, string>,
      nodeSelector: {} as Record<string, string>,
      tolerations: [] as Record<string, unknown>[],
      affinity: {} as Record<string, unknown>,
    },
  } satisfies Static<ReturnType<typeof controllerValuesSchema<{}>>>;
}
