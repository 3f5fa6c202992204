/**
 * An OCI image layout (image-spec v1.1) in memory: content-addressed blobs,
 * one manifest, and index.json naming it by tag. The cozystack-packages
 * artifact (synth/oci.ts) and the controller images (hack/images/oci-image.ts)
 * are both written through it, so every byte is a function of the blobs added.
 */
import { createHash } from 'node:crypto';

export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

/** `sha256:<hex>` of some bytes: a blob's digest. */
export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The blobs of one layout, in the order they were added. */
export class LayoutBlobs {
  readonly blobs = new Map<string, { readonly mediaType: string; readonly bytes: Uint8Array }>();

  /** Stores the bytes under their digest and returns their descriptor. */
  add(mediaType: string, bytes: Uint8Array): Descriptor {
    const digest = digestOf(bytes);
    this.blobs.set(digest, { mediaType, bytes });
    return { mediaType, digest, size: bytes.length };
  }

  /**
   * The layout's files, relative to its root: oci-layout, index.json naming
   * `manifest` (a blob added here) by `tag`, and blobs/sha256/*.
   */
  files(manifest: Descriptor, tag: string): Map<string, string | Uint8Array> {
    const index = {
      schemaVersion: 2,
      mediaType: OCI_INDEX_MEDIA_TYPE,
      manifests: [{ ...manifest, annotations: { 'org.opencontainers.image.ref.name': tag } }],
    };
    const files = new Map<string, string | Uint8Array>([
      ['oci-layout', JSON.stringify({ imageLayoutVersion: '1.0.0' }) + '\n'],
      ['index.json', JSON.stringify(index, null, 2) + '\n'],
    ]);
    for (const [digest, blob] of this.blobs) {
      files.set(`blobs/sha256/${digest.slice('sha256:'.length)}`, blob.bytes);
    }
    return files;
  }
}
