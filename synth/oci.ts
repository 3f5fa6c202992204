/**
 * The cozystack-packages artifact as an OCI image layout, in the shape
 * `flux push artifact` produces (docs/packaging.md): an empty Flux
 * config blob and one tar+gzip layer of the packages tree. Every byte is a
 * function of the tree, so the manifest digest is reproducible.
 */
import { RELEASE_VERSION } from '../constructs/version.js';
import { LayoutBlobs, OCI_MANIFEST_MEDIA_TYPE, type Descriptor } from '../lib/oci/layout.js';
import { tarGz } from '../lib/oci/tar.js';

/** test/e2e reads the manifest media type from here. */

export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_LAYER_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';

export interface OciArtifact {
  /** The layout's files, relative to its root: oci-layout, index.json, blobs/sha256/*. */
  readonly files: Map<string, string | Uint8Array>;
  /** The manifest: what a registry and Flux call the artifact's digest. */
  readonly manifest: Descriptor;
  /** The tag the layout names the manifest by. */
  readonly tag: string;
}

export function ociArtifact(tree: ReadonlyMap<string, string | Uint8Array>, tag: string = RELEASE_VERSION): OciArtifact {
  const blobs = new LayoutBlobs();
  const config = blobs.add(FLUX_CONFIG_MEDIA_TYPE, Buffer.from('{}'));
  const layer = blobs.add(FLUX_LAYER_MEDIA_TYPE, tarGz(tree));
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
  const manifest = blobs.add(OCI_MANIFEST_MEDIA_TYPE, Buffer.from(JSON.stringify(manifestJson)));
  return { files: blobs.files(manifest, tag), manifest, tag };
}
