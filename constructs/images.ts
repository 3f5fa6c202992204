/**
 * Image pins: the one source of every container image the artifact references.
 *
 * Every reference is `<repository>:<tag>@sha256:<64 hex>` (Cozystack's
 * "repository + digest inside tag" shape); synth refuses anything else.
 *
 * The controllers' digests are the ones `npm run images` builds from this
 * commit's sources (reproducible: every input pinned, hack/images/inputs.ts),
 * known without any registry. CI's `npm run images -- --check` rebuilds and
 * fails when one differs; after a change to what the images hold (controllers/,
 * api/, the lockfile, hack/images/) re-stamp with
 * `npm run images -- --stamp && npm run synth`. A release's
 * `npm run images -- --push` refuses an image whose digest is not stamped here.
 */

import { RELEASE_VERSION } from './version.js';

export interface ImagePin {
  /** Registry and path, without tag. */
  readonly repository: string;
  /** The human-readable tag. */
  readonly tag: string;
  /** `sha256:<64 lowercase hex>`: what actually runs. */
  readonly digest: string;
}

export const IMAGE_TAG_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}@sha256:[0-9a-f]{64}$';

/**
 * Where this project's images live: under the Cozystack organisation but
 * outside `ghcr.io/cozystack/cozystack/`, the platform build's registry, whose
 * release tooling (hack/promote-retag.sh) retags every ref under that prefix as
 * its own. These images are released on this project's version line, so the
 * platform's promotion must pass over them.
 */
export const IMAGE_REGISTRY = 'ghcr.io/cozystack';
/** The platform build's registry (hack/common-envs.mk REGISTRY); never ours. */
export const PLATFORM_REGISTRY = 'ghcr.io/cozystack/cozystack';

export const IMAGES = {
  addressController: {
    repository: `${IMAGE_REGISTRY}/address-controller`,
    // Tags follow the release version without a leading v, as Cozystack's component-versioned images do.
    tag: RELEASE_VERSION,
    digest: 'sha256:9830142f94a8dcf16a661817bdd3a76b5ca7f03a0502eff6f10c4c6a5cb2c6cc',
  },
  metallbIad: {
    repository: `${IMAGE_REGISTRY}/metallb-iad`,
    tag: RELEASE_VERSION,
    digest: 'sha256:c9d2ef1501596197766b8782bd301734f1f5172d3f8af54e7a5908d846bd60e3',
  },
} as const satisfies Record<string, ImagePin>;

/** Checks a pin; returns a message naming what is wrong, or undefined. */
export function checkImagePin(name: string, pin: ImagePin): string | undefined {
  if (!/^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+$/.test(pin.repository)) {
    return `image ${name}: repository ${JSON.stringify(pin.repository)} is not a registry path`;
  }
  if (pin.repository.includes('@') || pin.tag.includes('@')) {
    return `image ${name}: put the digest in "digest", not in repository or tag`;
  }
  if (!pin.digest) {
    return `image ${name}: no digest; every image must be pinned as tag@sha256:<64 hex>`;
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(pin.digest)) {
    return `image ${name}: digest ${JSON.stringify(pin.digest)} is malformed; expected sha256:<64 lowercase hex>`;
  }
  if (pin.repository.startsWith(`${PLATFORM_REGISTRY}/`)) {
    return `image ${name}: repository ${JSON.stringify(pin.repository)} is under ${PLATFORM_REGISTRY}/, which the platform's release promotion owns; use ${IMAGE_REGISTRY}/<name>`;
  }
  if (/^v[0-9]/.test(pin.tag)) {
    return `image ${name}: tag ${JSON.stringify(pin.tag)} starts with "v"; tags are the bare version (${pin.tag.slice(1)})`;
  }
  if (!new RegExp(IMAGE_TAG_PATTERN).test(`${pin.tag}@${pin.digest}`)) {
    return `image ${name}: tag ${JSON.stringify(pin.tag)} is not a valid tag`;
  }
  return undefined;
}

/** The values shape of a pin: repository plus `tag@digest`. */
export function imageValues(pin: ImagePin): { repository: string; tag: string } {
  return { repository: pin.repository, tag: `${pin.tag}@${pin.digest}` };
}
