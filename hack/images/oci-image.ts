/**
 * A container image as an OCI image layout (image-spec v1.1): gzip layers,
 * a config with no timestamps, one manifest, index.json naming it by tag.
 * Every byte is a function of the layers' entries and the config, so two
 * builds of the same inputs have one digest.
 */
import { digestOf, LayoutBlobs, OCI_MANIFEST_MEDIA_TYPE, type Descriptor } from '../../lib/oci/layout.js';
import { gzip, tarOf, type TarEntry } from '../../lib/oci/tar.js';

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

/** A layer's diff ID and gzip, per entries array: both controllers share the base and Node layers, compressed once. */
const layerCache = new WeakMap<readonly TarEntry[], { diffId: string; gzip: Uint8Array }>();

function layer(entries: readonly TarEntry[]): { diffId: string; gzip: Uint8Array } {
  let done = layerCache.get(entries);
  if (!done) {
    const tar = tarOf(entries);
    done = { diffId: digestOf(tar), gzip: gzip(tar) };
    layerCache.set(entries, done);
  }
  return done;
}

export function ociImage(layers: readonly (readonly TarEntry[])[], config: ImageConfig, tag: string): OciImage {
  const blobs = new LayoutBlobs();
  const diffIds: string[] = [];
  const layerDescriptors = layers.map((entries) => {
    const compressed = layer(entries);
    diffIds.push(compressed.diffId);
    return blobs.add(OCI_LAYER_MEDIA_TYPE, compressed.gzip);
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
  const configDescriptor = blobs.add(OCI_CONFIG_MEDIA_TYPE, Buffer.from(JSON.stringify(configJson)));
  const manifestJson = { schemaVersion: 2, mediaType: OCI_MANIFEST_MEDIA_TYPE, config: configDescriptor, layers: layerDescriptors };
  const manifest = blobs.add(OCI_MANIFEST_MEDIA_TYPE, Buffer.from(JSON.stringify(manifestJson)));
  return { files: blobs.files(manifest, tag), manifest, tag };
}
