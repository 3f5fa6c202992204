import { describe, expect, it } from 'vitest';
import { checkImagePin, IMAGES, imageValues } from '../../constructs/images.js';

const good = { repository: 'ghcr.io/cozystack/x', tag: '1.0.0', digest: `sha256:${'ab'.repeat(32)}` };

describe('image pins', () => {
  it('every pin in constructs/images.ts is tag@sha256', () => {
    for (const [name, pin] of Object.entries(IMAGES)) {
      expect(checkImagePin(name, pin)).toBeUndefined();
      expect(imageValues(pin).tag).toMatch(/^[^@]+@sha256:[0-9a-f]{64}$/);
      // Outside the platform registry that hack/promote-retag.sh selects, tag without a leading v.
      expect(pin.repository).toMatch(/^ghcr\.io\/cozystack\/[a-z0-9-]+$/);
      expect(pin.tag).not.toMatch(/^v/);
    }
  });

  it.each([
    [{ ...good, digest: '' }, 'image x: no digest; every image must be pinned as tag@sha256:<64 hex>'],
    [{ ...good, digest: 'sha256:abc' }, 'image x: digest "sha256:abc" is malformed; expected sha256:<64 lowercase hex>'],
    [{ ...good, digest: `sha256:${'AB'.repeat(32)}` }, /is malformed/],
    [{ ...good, tag: 'v1@sha256:00' }, 'image x: put the digest in "digest", not in repository or tag'],
    [{ ...good, tag: '' }, 'image x: tag "" is not a valid tag'],
    [{ ...good, repository: 'Not A Repo' }, 'image x: repository "Not A Repo" is not a registry path'],
    [
      { ...good, repository: 'ghcr.io/cozystack/cozystack/x' },
      `image x: repository "ghcr.io/cozystack/cozystack/x" is under ghcr.io/cozystack/cozystack/, which the platform's release promotion owns; use ghcr.io/cozystack/<name>`,
    ],
    [{ ...good, tag: 'v1.0.0' }, 'image x: tag "v1.0.0" starts with "v"; tags are the bare version (1.0.0)'],
  ])('refuses %j', (pin, message) => {
    const problem = checkImagePin('x', pin);
    if (typeof message === 'string') {
      expect(problem).toBe(message);
    } else {
      expect(problem).toMatch(message);
    }
  });
});
