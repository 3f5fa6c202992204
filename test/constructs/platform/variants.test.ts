import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  ADDRESS_CONTROLLER_PACKAGE,
  METALLB,
  METALLB_IAD_PACKAGE,
  PLATFORM_VARIANTS,
  PRESETS,
  metallbRendered,
  renderedPackages,
  type Bundles,
  type PlatformVariant,
} from '../../../constructs/platform/variants.js';
import { platformFragment } from '../../../constructs/platform/platform-fragment.js';
import { renderChart } from '../../support/helm.js';

const CONFIGS: Record<string, (b: Bundles) => Bundles> = {
  disabled: (b) => b,
  enabled: (b) => ({ ...b, enabledPackages: [...b.enabledPackages, ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE] }),
  'enabled, driver in disabledPackages': (b) => ({
    ...CONFIGS.enabled!(b),
    disabledPackages: [METALLB_IAD_PACKAGE],
  }),
  'enabled, metallb disabled': (b) => ({ ...CONFIGS.enabled!(b), disabledPackages: [METALLB] }),
  'enabled, core disabled': (b) => ({ ...CONFIGS.enabled!(b), disabledPackages: [ADDRESS_CONTROLLER_PACKAGE] }),
  'only the driver enabled': (b) => ({ ...b, enabledPackages: [METALLB_IAD_PACKAGE] }),
  'only the core enabled': (b) => ({ ...b, enabledPackages: [ADDRESS_CONTROLLER_PACKAGE] }),
};

/** [driver rendered, core rendered] per variant × configuration. */
const EXPECTED: Record<PlatformVariant, Record<string, [boolean, boolean]>> = {
  // The default platform variant has the system bundle off: no system package renders, ours neither.
  default: { disabled: [false, false], enabled: [false, false], 'enabled, driver in disabledPackages': [false, false], 'enabled, metallb disabled': [false, false], 'enabled, core disabled': [false, false], 'only the driver enabled': [false, false], 'only the core enabled': [false, false] },
  'isp-full': { disabled: [false, false], enabled: [true, true], 'enabled, driver in disabledPackages': [false, true], 'enabled, metallb disabled': [false, true], 'enabled, core disabled': [false, false], 'only the driver enabled': [true, true], 'only the core enabled': [false, true] },
  'isp-full-generic': { disabled: [false, false], enabled: [true, true], 'enabled, driver in disabledPackages': [false, true], 'enabled, metallb disabled': [false, true], 'enabled, core disabled': [false, false], 'only the driver enabled': [true, true], 'only the core enabled': [false, true] },
  'isp-hosted': { disabled: [false, false], enabled: [false, true], 'enabled, driver in disabledPackages': [false, true], 'enabled, metallb disabled': [false, true], 'enabled, core disabled': [false, false], 'only the driver enabled': [false, false], 'only the core enabled': [false, true] },
};

const cases = PLATFORM_VARIANTS.flatMap((variant) => Object.keys(CONFIGS).map((config) => [variant, config] as const));

describe('variant gating model', () => {
  it.each(cases)('%s, %s', (variant, config) => {
    const bundles = CONFIGS[config]!(PRESETS[variant]);
    const packages = renderedPackages(bundles);
    const [driver, core] = EXPECTED[variant][config]!;
    expect(packages.includes(METALLB_IAD_PACKAGE), 'driver').toBe(driver);
    expect(packages.includes(ADDRESS_CONTROLLER_PACKAGE), 'core').toBe(core);
  });

  it('never renders the driver without MetalLB, nor without the core it depends on', () => {
    for (const [variant, config] of cases) {
      const packages = renderedPackages(CONFIGS[config]!(PRESETS[variant]));
      if (packages.includes(METALLB_IAD_PACKAGE)) {
        expect(packages).toContain(METALLB);
        expect(packages).toContain(ADDRESS_CONTROLLER_PACKAGE);
      }
    }
  });

  it('follows the MetalLB rule rather than a copy of it', () => {
    for (const [variant, config] of cases) {
      const bundles = CONFIGS[config]!(PRESETS[variant]);
      expect(renderedPackages(bundles).includes(METALLB)).toBe(metallbRendered(bundles));
    }
  });
});

describe('the platform-chart fragment, rendered by helm, follows whatever the system bundle renders', () => {
  // A harness platform chart: the fragment, the platform's package helper as Cozystack's
  // describes it, and a system bundle whose MetalLB rule is nothing like the real
  // one (a value of its own). The fragment must follow it all the same: it reads
  // the bundle's render and restates no rule. Against the real chart this runs
  // as the platform's helm-unittest suite (npm run conformance).
  const chart = mkdtempSync(join(tmpdir(), 'platform-harness-'));
  mkdirSync(join(chart, 'templates', 'bundles'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: cozy-platform-harness\nversion: 0.0.0\n');
  writeFileSync(
    join(chart, 'templates', '_helpers.tpl'),
    [
      '{{- define "cozystack.platform.package.default" -}}',
      '{{- $name := index . 0 }}{{- $root := index . 1 }}',
      '{{- if not (has $name $root.Values.bundles.disabledPackages) }}',
      '---',
      'apiVersion: cozystack.io/v1alpha1',
      'kind: Package',
      'metadata:',
      '  name: {{ $name }}',
      '  annotations:',
      '    helm.sh/resource-policy: keep',
      'spec:',
      '  variant: default',
      '{{- end }}',
      '{{- end }}',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(chart, 'templates', 'bundles', 'system.yaml'),
    [
      '{{- if .Values.bundles.system.enabled }}',
      '# Networking',
      '{{ include "cozystack.platform.package.default" (list "cozystack.networking" $) }}',
      '{{- if .Values.harness.metallbHere }}',
      '{{ include "cozystack.platform.package.default" (list "cozystack.metallb" $) }}',
      '{{- end }}',
      '{{- end }}',
      '',
    ].join('\n'),
  );
  writeFileSync(join(chart, 'templates', 'bundles', 'addresses.yaml'), platformFragment());
  const enabled = [ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE];

  it.each([
    ['MetalLB rendered', { system: { enabled: true }, enabledPackages: enabled, disabledPackages: [] }, true, [ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE]],
    ['MetalLB not rendered by the bundle', { system: { enabled: true }, enabledPackages: enabled, disabledPackages: [] }, false, [ADDRESS_CONTROLLER_PACKAGE]],
    ['MetalLB disabled', { system: { enabled: true }, enabledPackages: enabled, disabledPackages: [METALLB] }, true, [ADDRESS_CONTROLLER_PACKAGE]],
    ['the driver disabled', { system: { enabled: true }, enabledPackages: enabled, disabledPackages: [METALLB_IAD_PACKAGE] }, true, [ADDRESS_CONTROLLER_PACKAGE]],
    ['the core disabled', { system: { enabled: true }, enabledPackages: enabled, disabledPackages: [ADDRESS_CONTROLLER_PACKAGE] }, true, []],
    ['only the driver enabled', { system: { enabled: true }, enabledPackages: [METALLB_IAD_PACKAGE], disabledPackages: [] }, true, [ADDRESS_CONTROLLER_PACKAGE, METALLB_IAD_PACKAGE]],
    ['the system bundle off', { system: { enabled: false }, enabledPackages: enabled, disabledPackages: [] }, true, []],
  ])('%s', (_name, bundles, metallbHere, expected) => {
    const valuesFile = join(chart, `values-${_name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(valuesFile, stringify({ bundles, harness: { metallbHere } }));
    const names = renderChart(chart, '-f', valuesFile)
      .filter((o) => o.kind === 'Package' && enabled.includes(o.metadata.name))
      .map((o) => o.metadata.name)
      .sort();
    expect(names).toEqual(expected);
  });
});
