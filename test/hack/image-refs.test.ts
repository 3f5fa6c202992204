import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectImageRefs, imageRefFiles, main } from '../../hack/image-refs.js';
import { IMAGES } from '../../constructs/images.js';
import { synthesizedArtifact } from '../support/synth.js';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'image-refs-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe('image-refs', () => {
  it('lists the two controller pins of the synthesized packages, one a line', async () => {
    const pins = [IMAGES.addressController, IMAGES.metallbIad].map((p) => `${p.repository}:${p.tag}@${p.digest}`);
    expect(await main([join(synthesizedArtifact(), 'packages')])).toBe(pins.sort().map((p) => `${p}\n`).join(''));
  });

  it('reads the five shapes, depth-anchored, and skips vendored charts', () => {
    const root = tree({
      'system/a/values.yaml': `a:\n  image: "ghcr.io/cozystack/cozystack/a:v1@${D1}"\n`,
      'system/b/values.yaml': `b:\n  image: {registry: ghcr.io, repository: cozystack/cozystack/b, digest: "${D1}"}\n`,
      'system/c/values.yaml': `c:\n  image: {repository: ghcr.io/cozystack/cozystack/c, tag: "v1@${D1}"}\n`,
      'system/d/values.yaml': `global:\n  registry: {address: ghcr.io/cozystack/cozystack}\n  images:\n    d: {repository: d, tag: "v1@${D1}"}\n`,
      'core/installer/values.yaml': `cozystackOperator:\n  platformSourceUrl: oci://ghcr.io/cozystack/cozystack/cozystack-packages\n  platformSourceRef: "digest=${D1}"\n`,
      'system/e/images/e.tag': `ghcr.io/cozystack/cozystack/e:v1@${D1}\n`,
      'system/f/charts/upstream/values.yaml': 'image: {repository: ghcr.io/cozystack/cozystack/f, tag: main}\n',
    });
    expect(imageRefFiles(root).map((f) => f.slice(root.length + 1))).toEqual([
      'core/installer/values.yaml',
      'system/a/values.yaml',
      'system/b/values.yaml',
      'system/c/values.yaml',
      'system/d/values.yaml',
      'system/e/images/e.tag',
    ]);
    expect(collectImageRefs(root).map((r) => r.ref).sort()).toEqual([
      `ghcr.io/cozystack/cozystack/a:v1@${D1}`,
      `ghcr.io/cozystack/cozystack/b@${D1}`,
      `ghcr.io/cozystack/cozystack/c:v1@${D1}`,
      `ghcr.io/cozystack/cozystack/cozystack-packages@${D1}`,
      `ghcr.io/cozystack/cozystack/d:v1@${D1}`,
      `ghcr.io/cozystack/cozystack/e:v1@${D1}`,
    ]);
  });

  it('fails on a first-party ref without digest, naming the file', () => {
    const root = tree({ 'system/x/values.yaml': 'x:\n  image: {repository: ghcr.io/cozystack/cozystack/x, tag: v1.0.0}\n' });
    expect(() => collectImageRefs(root)).toThrow('system/x/values.yaml: first-party image ghcr.io/cozystack/cozystack/x:v1.0.0 has no @sha256:<64 hex> digest');
  });

  it('fails on one repository pinned at two digests', () => {
    const root = tree({
      'system/x/values.yaml': `x:\n  image: {repository: ghcr.io/cozystack/cozystack/x, tag: "v1@${D1}"}\n`,
      'system/y/values.yaml': `y:\n  image: {repository: ghcr.io/cozystack/cozystack/x, tag: "v1@${D2}"}\n`,
    });
    expect(() => collectImageRefs(root)).toThrow(`ghcr.io/cozystack/cozystack/x is pinned at 2 digests: ${D1}, ${D2}`);
  });

  it('lets third-party refs through without judging them', async () => {
    const root = tree({ 'system/x/values.yaml': 'x:\n  image: {repository: docker.io/library/busybox, tag: "1.37.0"}\n' });
    expect(await main([root])).toBe('docker.io/library/busybox:1.37.0\n');
  });
});
