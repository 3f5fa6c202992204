/**
 * The controller Deployment. Written as a typed L0 object rather than a
 * cdk8s-plus Deployment: cdk8s-plus defaults to no ServiceAccount token and
 * 1500m/2Gi limits, and its L1 serializer drops placeholders in struct fields.
 */
import type { ApiObject } from 'cdk8s';
import type { V1Container, V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { Construct } from 'constructs';
import { Helm, Release, valuesOf, type Templated } from '../helm/expr.js';
import { templatedObject } from '../helm/templated-object.js';
import { commonLabels, selectorLabels } from './labels.js';
import type { ControllerValues } from './values.js';

export interface ControllerDeploymentProps {
  /** Name of the Deployment and its container's binary, e.g. `address-controller`. */
  readonly name: string;
  readonly serviceAccountName: string;
  /** Arguments beyond the shared ones (leader election, metrics, probes, logging). */
  readonly extraArgs?: readonly Templated<string>[];
}

/** Values shared by every controller chart; the Deployment reads only these. */
interface SharedValues {
  image: { repository: string; tag: string; pullPolicy: string };
  imagePullSecrets: { name: string }[];
  controller: ControllerValues;
}

/**
 * What every Pod of a controller chart shares (the Deployment's, and the driver's adoption Job's):
 * the image as values pin it, the hardened security contexts, priority and placement.
 */
export function controllerPodBasics(): {
  pod: Templated<Pick<V1PodSpec, 'priorityClassName' | 'imagePullSecrets' | 'securityContext' | 'nodeSelector' | 'tolerations' | 'affinity'>>;
  container: Templated<Pick<V1Container, 'image' | 'imagePullPolicy' | 'resources' | 'securityContext'>>;
} {
  const v = valuesOf<SharedValues>();
  return {
    pod: {
      priorityClassName: Helm.when(v('controller.priorityClassName'), Helm.str(v('controller.priorityClassName'))),
      imagePullSecrets: Helm.yaml(v('imagePullSecrets')),
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      nodeSelector: Helm.yaml(v('controller.nodeSelector')),
      tolerations: Helm.yaml(v('controller.tolerations')),
      affinity: Helm.yaml(v('controller.affinity')),
    },
    container: {
      image: Helm.printf('%s:%s', v('image.repository'), v('image.tag')),
      imagePullPolicy: Helm.str(v('image.pullPolicy')),
      resources: Helm.yaml(v('controller.resources')),
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      },
    },
  };
}

export class ControllerDeployment extends Construct {
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: ControllerDeploymentProps) {
    super(scope, id);
    const v = valuesOf<SharedValues>();
    const metricsPort = v('controller.metricsPort');
    const healthPort = v('controller.healthProbePort');
    const basics = controllerPodBasics();

    this.apiObject = templatedObject<V1Deployment>(this, 'Resource', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: props.name, namespace: Helm.str(Release.namespace), labels: commonLabels(props.name) },
      spec: {
        replicas: Helm.int(v('controller.replicas')),
        // Two leaders never overlap on a rollout: the old pod releases the Lease on SIGTERM.
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        selector: { matchLabels: selectorLabels(props.name) },
        template: {
          metadata: { labels: commonLabels(props.name), annotations: Helm.yaml(v('controller.podAnnotations')) },
          spec: {
            serviceAccountName: props.serviceAccountName,
            // The controller talks to the API server; cdk8s-plus would switch the token off.
            automountServiceAccountToken: true,
            ...basics.pod,
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'controller',
                ...basics.container,
                args: [
                  Helm.printf('--leader-elect=%t', v('controller.leaderElect')),
                  Helm.when(
                    metricsPort,
                    Helm.printf('--metrics-bind-address=:%v', metricsPort),
                    '--metrics-bind-address=0',
                  ),
                  Helm.printf('--health-probe-bind-address=:%v', healthPort),
                  Helm.printf('--log-level=%s', v('controller.logLevel')),
                  ...(props.extraArgs ?? []),
                ],
                env: [
                  // The Lease and the controller's own Events live in the pod's namespace.
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                  { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                ],
                ports: [
                  Helm.when(metricsPort, { name: 'metrics', containerPort: Helm.int(metricsPort), protocol: 'TCP' }),
                  { name: 'health', containerPort: Helm.int(healthPort), protocol: 'TCP' },
                ],
                livenessProbe: {
                  httpGet: { path: '/healthz', port: 'health' },
                  initialDelaySeconds: 10,
                  periodSeconds: 20,
                },
                readinessProbe: {
                  httpGet: { path: '/readyz', port: 'health' },
                  initialDelaySeconds: 5,
                  periodSeconds: 10,
                },
              },
            ],
          },
        },
      },
    });
  }
}
