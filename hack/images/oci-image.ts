/**
 * A container image as an OCI image layout (image-spec v1.1): gzip layers,
 * a config with no timestamps, one manifest, index.json naming it by tag.
 * Every byte is a function of the layers' entries and the config, so two
 * builds of the same inputs have one digest.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'fflate';
import { OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE, type Descriptor } from '../../synth/oci.js';
import { tarOf, type TarEntry } from '../../synth/tar.js';

export const OCI_CONFIG_MEDIA_TYPE = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';

export interface ImageConfig {
  readonly user: string;
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly workingDir: string;
  readonly env: readonly string[];
  readonly exposedPorts: readonly number[];
  readonly labels: Readonly<Record<string, string>>;
}

export interface OciImage {
  readonly files: Map<string, string | Uint8Array>;
  readonly manifest: Descriptor;
  readonly tag: string;
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** A layer's diff ID and gzip, per entries array: both controllers share the base and Node layers, compressed once. */
const layerCache = new WeakMap<readonly TarEntry[], { diffId: string; gzip: Uint8Array }>();

function layer(entries: readonly TarEntry[]): { diffId: string; gzip: Uint8Array } {
  let done = layerCache.get(entries);
  if (!done) {
    const tar = tarOf(entries);
    done = { diffId: sha256(tar), gzip: gzipSync(tar, { level: 6, mtime: 0 }) };
    layerCache.set(entries, done);
  }
  return done;
}

export function ociImage(layers: readonly (readonly TarEntry[])[], config: ImageConfig, tag: string): OciImage {
  const blobs = new Map<string, Uint8Array>();
  const add = (mediaType: string, bytes: Uint8Array): Descriptor => {
    const digest = sha256(bytes);
    blobs.set(digest, bytes);
    return { mediaType, digest, size: bytes.length };
  };
  const diffIds: string[] = [];
  const layerDescriptors = layers.map((entries) => {
    const { diffId, gzip } = layer(entries);
    diffIds.push(diffId);
    return add(OCI_LAYER_MEDIA_TYPE, gzip);
  });
  const configJson = {
    architecture: 'amd64',
    os: 'linux',
    config: {
      User: config.user,
      Env: [...config.env],
      Entrypoint: [...config.entrypoint],
      Cmd: [...config.cmd],
      WorkingDir: config.workingDir,
      ExposedPorts: Object.fromEntries(config.exposedPorts.map((p) => [`${p}/tcp`, {}])),
      Labels: { ...config.labels },
    },
    rootfs: { type: 'layers', diff_ids: diffIds },
  };
  const configDescriptor = add(OCI_CONFIG_MEDIA_TYPE, Buffer.from(JSON.stringify(configJson)));
  const manifestJson = { schemaVersion: 2, mediaType: OCI_MANIFEST_MEDIA_TYPE, config: configDescriptor, layers: layerDescriptors };
  const manifest = add(OCI_MANIFEST_MEDIA_TYPE, Buffer.from(JSON.stringify(manifestJson)));
  const index = { schemaVersion: 2, mediaType: OCI_INDEX_MEDIA_TYPE, manifests: [{ ...manifest, annotations: { 'org.opencontainers.image.ref.name': tag } }] };
  const files = new Map<string, string | Uint8Array>([
    ['oci-layout', JSON.stringify({ imageLayoutVersion: '1.0.0' }) + '\n'],
    ['index.json', JSON.stringify(index, null, 2) + '\n'],
  ]);
  for (const [digest, bytes] of blobs) {
    files.set(`blobs/sha256/${digest.slice('sha256:'.length)}`, bytes);
  }
  return { files, manifest, tag };
}
