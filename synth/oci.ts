/**
 * The cozystack-packages artifact as an OCI image layout, in the shape
 * `flux push artifact` produces (docs/packaging.md): an empty Flux
 * config blob and one tar+gzip layer of the packages tree. Every byte is a
 * function of the tree, so the manifest digest is reproducible.
 */
import { createHash } from 'node:crypto';
import { RELEASE_VERSION } from '../constructs/version.js';
import { tarGz } from './tar.js';

export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_LAYER_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

export interface OciArtifact {
  /** The layout's files, relative to its root: oci-layout, index.json, blobs/sha256/*. */
  readonly files: Map<string, string | Uint8Array>;
  /** The manifest: what a registry and Flux call the artifact's digest. */
  readonly manifest: Descriptor;
  readonly blobs: ReadonlyMap<string, { readonly mediaType: string; readonly bytes: Uint8Array }>;
  /** The tag the layout names the manifest by. */
  readonly tag: string;
}

export function ociArtifact(tree: ReadonlyMap<string, string | Uint8Array>, tag: string = RELEASE_VERSION): OciArtifact {
  const blobs = new Map<string, { mediaType: string; bytes: Uint8Array }>();
  const add = (mediaType: string, bytes: Uint8Array): Descriptor => {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    blobs.set(digest, { mediaType, bytes });
    return { mediaType, digest, size: bytes.length };
  };
  const config = add(FLUX_CONFIG_MEDIA_TYPE, Buffer.from('{}'));
  const layer = add(FLUX_LAYER_MEDIA_TYPE, tarGz(tree));
  const manifestJson = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    config,
    layers: [layer],
    annotations: {
      'org.opencontainers.image.title': 'cozystack-packages',
      'org.opencontainers.image.version': tag,
    },
  };
  const manifest = add(OCI_MANIFEST_MEDIA_TYPE, Buffer.from(JSON.stringify(manifestJson)));
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX_MEDIA_TYPE,
    manifests: [{ ...manifest, annotations: { 'org.opencontainers.image.ref.name': tag } }],
  };
  const files = new Map<string, string | Uint8Array>([
    ['oci-layout', JSON.stringify({ imageLayoutVersion: '1.0.0' }) + '\n'],
    ['index.json', JSON.stringify(index, null, 2) + '\n'],
  ]);
  for (const [digest, blob] of blobs) {
    files.set(`blobs/sha256/${digest.slice('sha256:'.length)}`, blob.bytes);
  }
  return { files, manifest, blobs, tag };
}
