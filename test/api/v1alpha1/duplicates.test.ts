import { describe, expect, it } from 'vitest';
import { duplicateOf, ipIndexKeys, precedes, type IPAddress } from '../../../api/v1alpha1/index.js';

const at = (name: string, ip: string, created?: string): IPAddress => ({
  apiVersion: 'local.sdn.cozystack.io/v1alpha1',
  kind: 'IPAddress',
  metadata: { name, ...(created ? { creationTimestamp: new Date(created) } : {}) },
  spec: { className: 'c', address: ip, source: { fromClass: {} } },
});

describe('one IP, one IPAddress', () => {
  it('files every spelling of an IP under its canonical text, and an unparsable address under none', () => {
    expect(ipIndexKeys(at('a', '::ffff:192.0.2.131'))).toEqual(['192.0.2.131']);
    expect(ipIndexKeys(at('a', '2001:DB8:0:0::7'))).toEqual(['2001:db8::7']);
    expect(ipIndexKeys(at('a', 'not-an-ip'))).toEqual([]);
  });

  it('the earlier by creationTimestamp, then by name, has the IP', () => {
    const a = at('b-name', '192.0.2.1', '2026-12-01T00:00:00Z');
    const b = at('a-name', '192.0.2.1', '2026-12-01T00:00:01Z');
    const c = at('c-name', '192.0.2.1', '2026-12-01T00:00:01Z');
    expect(precedes(a, b)).toBe(true);
    expect(precedes(b, c)).toBe(true);
    expect(duplicateOf(a, [a, b, c])).toBeUndefined();
    expect(duplicateOf(b, [a, b, c])?.metadata.name).toBe('b-name');
    expect(duplicateOf(c, [c, b])?.metadata.name).toBe('a-name');
    expect(duplicateOf(c, [c])).toBeUndefined();
  });

  it('one without a creationTimestamp (not yet stored) comes after every stored one', () => {
    const stored = at('z', '192.0.2.1', '2026-12-01T00:00:00Z');
    const fresh = at('a', '192.0.2.1');
    expect(duplicateOf(fresh, [stored])?.metadata.name).toBe('z');
    expect(duplicateOf(stored, [fresh])).toBeUndefined();
  });
});
