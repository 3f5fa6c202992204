/**
 * Working with a Cozystack checkout (a clone of cozystack/cozystack, or the
 * trimmed snapshot in ../shared): a writable copy with dist/packages laid over
 * it, and the `cozystack-values` the platform chart renders for the operator.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ToolError } from '../../lib/errors.js';

export const PLATFORM_CHART = join('packages', 'core', 'platform');

/** Checks that `dir` looks like a Cozystack checkout, naming what is missing. */
export function checkCheckout(dir: string): void {
  for (const path of [join(PLATFORM_CHART, 'Chart.yaml'), join(PLATFORM_CHART, 'sources'), join('packages', 'system'), 'hack']) {
    if (!existsSync(join(dir, path))) {
      throw new ToolError([`${dir}: not a Cozystack checkout (no ${path})`]);
    }
  }
}

/** A writable copy of the checkout (a read-only one stays untouched). */
export function copyCheckout(dir: string, prefix = 'cozystack-'): string {
  checkCheckout(dir);
  const work = mkdtempSync(join(tmpdir(), prefix));
  cpSync(dir, work, { recursive: true, filter: (src) => !src.includes(`${join(dir, '.git')}`) });
  makeWritable(work);
  return work;
}

function makeWritable(path: string): void {
  const stat = statSync(path);
  chmodSync(path, stat.mode | 0o200 | (stat.isDirectory() ? 0o100 : 0));
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) {
      makeWritable(join(path, entry));
    }
  }
}

/** Lays a packages tree (dist/packages) over the checkout's packages/, as a maintainer copies it in. */
export function overlayPackages(checkout: string, packages: string): void {
  if (!existsSync(packages)) {
    throw new ToolError([`${packages}: no such packages tree (run npm run synth first)`]);
  }
  cpSync(packages, join(checkout, 'packages'), { recursive: true });
}

/**
 * The `values.yaml` of the `cozystack-values` Secret as the checkout's own
 * platform chart renders it (templates/apps.yaml) for a preset: the values the
 * operator layers under every HelmRelease it creates, `_cluster` included.
 * templates/repository.yaml looks up the operator's Flux source and fails
 * outside a cluster, so the render runs on a copy without it.
 */
export function renderCozystackValues(checkout: string, helmBin: string, variant = 'isp-full'): string {
  const chart = mkdtempSync(join(tmpdir(), 'cozystack-platform-'));
  try {
    cpSync(join(checkout, PLATFORM_CHART), chart, { recursive: true });
    makeWritable(chart);
    rmSync(join(chart, 'templates', 'repository.yaml'), { force: true });
    const preset = join(chart, `values-${variant}.yaml`);
    const args = ['template', 'cozystack-platform', chart, '--namespace', 'cozy-system', '--show-only', 'templates/apps.yaml'];
    if (existsSync(preset)) {
      args.push('-f', preset);
    }
    const result = spawnSync(helmBin, args, { encoding: 'utf8' });
    if (result.status !== 0) {
      throw new ToolError([`rendering ${join(checkout, PLATFORM_CHART, 'templates', 'apps.yaml')}: ${result.stderr.trim()}`]);
    }
    for (const doc of parseAllDocuments(result.stdout)) {
      const object = doc.toJS() as { kind?: string; metadata?: { name?: string }; stringData?: Record<string, string> } | null;
      if (object?.kind === 'Secret' && object.metadata?.name === 'cozystack-values' && object.stringData?.['values.yaml']) {
        return object.stringData['values.yaml'];
      }
    }
    throw new ToolError([`${join(checkout, PLATFORM_CHART, 'templates', 'apps.yaml')}: renders no cozystack-values Secret with values.yaml`]);
  } finally {
    rmSync(chart, { recursive: true, force: true });
  }
}
