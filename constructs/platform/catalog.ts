/**
 * The platform's existing PackageSources the new packages' dependency graph
 * reaches, as (name → variants' dependsOn), so select-install works on a closed
 * graph. Restated from cozystack-packaging.md: MetalLB's edge is documented
 * there (§2.2); for the rest only the postgres closure is (§4), and these are
 * the fewest edges that reproduce it. The new packages' own sources are added
 * from their definitions, never restated here.
 */
import { ADDRESS_PACKAGE_SOURCES } from '../packages/sources.js';
import { sourceDependencies } from './package-source.js';

export interface CatalogEntry {
  readonly name: string;
  /** The union over the source's variants. */
  readonly dependsOn: readonly string[];
}

const p = (name: string) => `cozystack.${name}`;

export const PLATFORM_SOURCES: readonly CatalogEntry[] = [
  { name: p('networking'), dependsOn: [] },
  { name: p('metallb'), dependsOn: [p('networking')] },
  { name: p('cert-manager'), dependsOn: [p('networking')] },
  { name: p('gateway-api-crds'), dependsOn: [] },
  { name: p('prometheus-operator-crds'), dependsOn: [] },
  // The engine's oidc variant adds keycloak and its operator (§4: the union over-selects on purpose).
  { name: p('cozystack-engine'), dependsOn: [p('networking'), p('cert-manager'), p('gateway-api-crds'), p('keycloak'), p('keycloak-operator')] },
  { name: p('keycloak-operator'), dependsOn: [p('networking')] },
  { name: p('keycloak'), dependsOn: [p('keycloak-operator'), p('cert-manager')] },
  { name: p('postgres-operator'), dependsOn: [p('networking'), p('prometheus-operator-crds')] },
  { name: p('postgres-application'), dependsOn: [p('postgres-operator'), p('cozystack-engine')] },
];

/** The whole graph: the platform subset plus the sources this repository defines. */
export function sourceCatalog(): CatalogEntry[] {
  const own = ADDRESS_PACKAGE_SOURCES.map((d) => ({ name: d.name, dependsOn: sourceDependencies(d) }));
  return [...PLATFORM_SOURCES, ...own].sort((a, b) => a.name.localeCompare(b.name));
}
