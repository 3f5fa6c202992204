/**
 * helm-unittest suites for the platform fragment, shipped as
 * packages/core/platform/tests/bundles_addresses_test.yaml and run against
 * Cozystack's real platform chart: for each platform variant's own preset
 * values file and each named configuration, exactly the address Packages the
 * variant model predicts. A model that drifted from the real bundles fails here.
 */
import type { UnitTest, UnitTestSuite } from '../packages/unit-test-suite.js';
import {
  ADDRESS_PACKAGE_RULES,
  NAMED_CONFIGURATIONS,
  PLATFORM_VARIANTS,
  PRESETS,
  type PlatformVariant,
} from './variants.js';

const FRAGMENT = 'templates/bundles/addresses.yaml';
const PACKAGE = { kind: 'Package', apiVersion: 'cozystack.io/v1alpha1' } as const;

/** The preset values file a platform variant installs with (values.yaml alone for default). */
export function presetValuesFile(variant: PlatformVariant): string | undefined {
  return variant === 'default' ? undefined : `values-${variant}.yaml`;
}

export function platformBundleSuites(): UnitTestSuite[] {
  return PLATFORM_VARIANTS.map((variant) => {
    const preset = presetValuesFile(variant);
    const tests: UnitTest[] = NAMED_CONFIGURATIONS.map((configuration) => {
      const bundles = configuration.apply(PRESETS[variant]);
      const rendered = ADDRESS_PACKAGE_RULES.filter((rule) => rule.rendered(bundles)).map((rule) => rule.name);
      const absent = ADDRESS_PACKAGE_RULES.map((rule) => rule.name).filter((name) => !rendered.includes(name));
      return {
        it: `${configuration.name}: renders ${rendered.length > 0 ? rendered.join(' and ') : 'no address package'}`,
        template: FRAGMENT,
        set: {
          'bundles.enabledPackages': [...bundles.enabledPackages],
          'bundles.disabledPackages': [...bundles.disabledPackages],
        },
        asserts: [
          { hasDocuments: { count: rendered.length } },
          ...rendered.map((name) => ({ containsDocument: { ...PACKAGE, name, any: true } })),
          ...(rendered.length > 0 ? absent.map((name) => ({ not: true as const, containsDocument: { ...PACKAGE, name, any: true } })) : []),
        ],
      };
    });
    return {
      suite: `address packages on the ${variant} platform variant${preset ? ` (${preset})` : ''}`,
      // helm-unittest loads only the listed templates: the fragment includes the
      // system bundle's render, so both are listed and the asserts read the fragment.
      templates: [FRAGMENT, 'templates/bundles/system.yaml'],
      release: { name: 'cozystack-platform', namespace: 'cozy-system' },
      ...(preset ? { values: [`../${preset}`] } : {}),
      tests,
    };
  });
}
