import { describe, expect, it } from 'vitest';
import { API_VERSION, claimKey, claimRefIndexKeys, type IPAddress } from '../../../api/v1alpha1/index.js';

const address = (claimRef?: IPAddress['spec']['claimRef']): IPAddress => ({
  apiVersion: API_VERSION,
  kind: 'IPAddress',
  metadata: { name: 'pool-a-203-0-113-7' },
  spec: { className: 'pool-a', address: '203.0.113.7', source: { fromClass: {} }, ...(claimRef ? { claimRef } : {}) },
});

describe('the spec.claimRef index both controllers keep', () => {
  it('files a bound address under its claim, spelled as the readers look it up', () => {
    expect(claimRefIndexKeys(address({ namespace: 'tenant-a', name: 'web' }))).toEqual([claimKey('tenant-a', 'web')]);
    expect(claimKey('tenant-a', 'web')).toBe('tenant-a/web');
  });

  it('files an address without a claimRef under no key', () => {
    expect(claimRefIndexKeys(address())).toEqual([]);
  });
});
