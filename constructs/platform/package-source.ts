/** Cozystack's `PackageSource` (cozystack.io/v1alpha1, cluster-scoped; docs/packaging.md). */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

export interface PackageSourceInstall {
  /** The install namespace; the operator creates it. */
  readonly namespace: string;
  /** @default the component name */
  readonly releaseName?: string;
  readonly privileged?: boolean;
  /** Components of the same variant to install first. */
  readonly dependsOn?: readonly string[];
  /** Helm CRD policy; `CreateReplace` only for additive-only schemas. @default Skip */
  readonly upgradeCRDs?: 'Skip' | 'Create' | 'CreateReplace';
}

export interface PackageSourceComponent {
  readonly name: string;
  /** Chart directory relative to the artifact root, e.g. `system/metallb-iad`. */
  readonly path: string;
  readonly valuesFiles?: readonly string[];
  /** Absent: the component only provides an artifact, no HelmRelease. */
  readonly install?: PackageSourceInstall;
}

export interface PackageSourceVariant {
  readonly name: string;
  /** Other PackageSources (by name) whose Packages must be Ready first. */
  readonly dependsOn?: readonly string[];
  readonly components: readonly PackageSourceComponent[];
}

export interface PackageSourceDefinition {
  /** `cozystack.<x>`; the Package that installs it carries the same name. */
  readonly name: string;
  readonly variants: readonly PackageSourceVariant[];
}

/** Every source points at the platform's packages artifact, at its root. */
export const PACKAGES_SOURCE_REF = {
  kind: 'OCIRepository',
  name: 'cozystack-packages',
  namespace: 'cozy-system',
  path: '/',
} as const;

export class PackageSource extends Construct {
  constructor(scope: Construct, id: string, definition: PackageSourceDefinition) {
    super(scope, id);
    new ApiObject(this, 'Resource', {
      apiVersion: 'cozystack.io/v1alpha1',
      kind: 'PackageSource',
      metadata: { name: definition.name },
      spec: {
        sourceRef: { ...PACKAGES_SOURCE_REF },
        variants: definition.variants.map((variant) => ({
          name: variant.name,
          dependsOn: variant.dependsOn ? [...variant.dependsOn] : undefined,
          components: variant.components.map((component) => ({
            name: component.name,
            path: component.path,
            valuesFiles: component.valuesFiles ? [...component.valuesFiles] : undefined,
            install: component.install
              ? { ...component.install, dependsOn: component.install.dependsOn ? [...component.install.dependsOn] : undefined }
              : undefined,
          })),
        })),
      },
    });
  }
}

/** Every PackageSource dependency named in a definition, across all variants (the over-selecting union). */
export function sourceDependencies(definition: PackageSourceDefinition): string[] {
  return [...new Set(definition.variants.flatMap((v) => v.dependsOn ?? []))].sort();
}
