import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { artifactDigest, OCI_LAYOUT_DIR, synthesize } from '../../synth/artifact.js';
import { bytesOf, sameContent } from '../../synth/file-tree.js';
import { FLUX_CONFIG_MEDIA_TYPE, FLUX_LAYER_MEDIA_TYPE } from '../../synth/oci.js';
import { OCI_MANIFEST_MEDIA_TYPE } from '../../lib/oci/layout.js';
import { readTree, writeFiles } from '../../synth/output.js';

const files = synthesize();
const blob = (digest: string) => bytesOf(files.get(`${OCI_LAYOUT_DIR}/blobs/sha256/${digest.replace('sha256:', '')}`)!);
const json = (digest: string) => JSON.parse(Buffer.from(blob(digest)).toString('utf8'));
const sha = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('the cozystack-packages OCI artifact', () => {
  const index = JSON.parse(files.get(`${OCI_LAYOUT_DIR}/index.json`) as string);
  const manifestDescriptor = index.manifests[0];
  const manifest = json(manifestDescriptor.digest);

  it('is an OCI image layout naming one manifest, whose digest synth records', () => {
    expect(JSON.parse(files.get(`${OCI_LAYOUT_DIR}/oci-layout`) as string)).toEqual({ imageLayoutVersion: '1.0.0' });
    expect(index.manifests).toHaveLength(1);
    expect(manifestDescriptor.mediaType).toBe(OCI_MANIFEST_MEDIA_TYPE);
    expect(artifactDigest(files)).toBe(manifestDescriptor.digest);
  });

  it('has the Flux shape: the Flux config media type and one tar+gzip layer', () => {
    expect(manifest.config.mediaType).toBe(FLUX_CONFIG_MEDIA_TYPE);
    expect(manifest.layers).toHaveLength(1);
    expect(manifest.layers[0].mediaType).toBe(FLUX_LAYER_MEDIA_TYPE);
  });

  it('stores every blob under its own sha256 with the size its descriptor says', () => {
    for (const descriptor of [manifestDescriptor, manifest.config, ...manifest.layers]) {
      const bytes = blob(descriptor.digest);
      expect(sha(bytes)).toBe(descriptor.digest);
      expect(bytes.length).toBe(descriptor.size);
    }
    const blobs = [...files.keys()].filter((p) => p.startsWith(`${OCI_LAYOUT_DIR}/blobs/`));
    expect(blobs).toHaveLength(3);
  });

  it('carries exactly the packages/ tree, readable by GNU tar', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oci-layer-'));
    const layer = join(dir, 'layer.tar.gz');
    writeFiles(dir, new Map([['layer.tar.gz', blob(manifest.layers[0].digest)]]));
    const out = join(dir, 'out');
    spawnSync('mkdir', [out]);
    const untar = spawnSync('tar', ['-xzf', layer, '-C', out], { encoding: 'utf8' });
    expect(untar.stderr).toBe('');
    const extracted = readTree(out);
    const packages = [...files.entries()].filter(([p]) => p.startsWith('packages/'));
    expect([...extracted.keys()].sort()).toEqual(packages.map(([p]) => p.slice('packages/'.length)).sort());
    for (const [path, content] of packages) {
      expect(sameContent(extracted.get(path.slice('packages/'.length)), content), path).toBe(true);
    }
  });

  it('is reproducible: fixed tar metadata, no gzip name or time, same digest on a second synthesis', () => {
    const gz = blob(manifest.layers[0].digest);
    expect([...gz.slice(4, 8)]).toEqual([0, 0, 0, 0]); // gzip MTIME
    expect(gz[3]! & 0x08).toBe(0); // no FNAME
    const listing = spawnSync('tar', ['-tvzf', '-'], { input: gz, encoding: 'utf8' }).stdout.trim().split('\n');
    for (const line of listing) {
      expect(line).toMatch(/^(-rw-r--r--|drwxr-xr-x) 0\/0 +\d+ 1970-01-01 00:00 /);
    }
    const tarBytes = gunzipSync(gz);
    expect(tarBytes.length % 512).toBe(0);
    expect(artifactDigest(synthesize())).toBe(artifactDigest(files));
  });
});
