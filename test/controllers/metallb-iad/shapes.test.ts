/** The driver's pure shapes: class parameters (class-parameters.ts), names (names.ts), placeholders (placeholders.ts), and the IP ranges they rest on (api/ip.ts). */
import { describe, expect, it } from 'vitest';
import { parseClassParameters } from '../../../controllers/metallb-iad/class-parameters.js';
import { allocationPlaceholderName, holdPlaceholderName, ipObjectName } from '../../../controllers/metallb-iad/names.js';
import { placeholderService } from '../../../controllers/metallb-iad/placeholders.js';
import { compareIps, parseRange, rangeContains } from '../../../api/ip.js';
import { boundAddress, publicClass } from './fixtures.js';

const withParameters = (parameters: unknown) => ({ ...publicClass(), spec: { ...publicClass().spec, parameters: parameters as Record<string, unknown> } });

describe('parameters', () => {
  it('accepts a list of CIDRs, and MetalLB ranges', () => {
    expect(parseClassParameters(withParameters({ addresses: ['203.0.113.0/24'] }))).toMatchObject({ ok: true, addresses: ['203.0.113.0/24'] });
    expect(parseClassParameters(withParameters({ addresses: ['203.0.113.10-203.0.113.20', '2001:db8::/64'], extra: 1 }))).toMatchObject({ ok: true });
  });

  it.each([
    [undefined, 'class has no parameters; this driver requires parameters.addresses or parameters.pool'],
    [{}, 'parameters.addresses must be a list of CIDRs or ranges'],
    [{ addresses: [] }, 'parameters.addresses names no addresses'],
    [{ addresses: '203.0.113.0/24' }, 'parameters.addresses must be a list of CIDRs or ranges'],
    [{ addresses: ['not-a-cidr'] }, 'parameters.addresses[0]: "not-a-cidr" is neither a CIDR nor a range (a bare IP needs /32 or /128)'],
    [{ addresses: ['203.0.113.7'] }, 'parameters.addresses[0]: "203.0.113.7" is neither a CIDR nor a range (a bare IP needs /32 or /128)'],
    [{ addresses: ['203.0.113.0/33'] }, 'parameters.addresses[0]: "203.0.113.0/33" is not a CIDR: prefix length must be 0-32'],
    [{ addresses: ['203.0.113.9-203.0.113.1'] }, 'parameters.addresses[0]: "203.0.113.9-203.0.113.1" is not a range: the first address is after the last'],
    [{ addresses: ['203.0.113.1-2001:db8::1'] }, 'parameters.addresses[0]: "203.0.113.1-2001:db8::1" is not a range: the ends are of different families'],
    [{ addresses: [7] }, 'parameters.addresses[0] must be a string, got 7'],
  ])('rejects %j', (parameters, message) => {
    expect(parseClassParameters(withParameters(parameters))).toEqual({ ok: false, message });
  });
});

describe('names and shapes', () => {
  it('names IPAddress objects after the IP', () => {
    expect(ipObjectName('203.0.113.7')).toBe('ip-203-0-113-7');
    expect(ipObjectName('2001:db8::7')).toBe('ip-2001-db8--7');
  });

  it('names an IPv6 address ending in :: validly, and every spelling of one address alike', () => {
    const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
    for (const [ip, name] of [
      ['2001:db8::', 'ip-2001-db8--0'],
      ['::', 'ip---0'],
      ['::1', 'ip---1'],
      ['2001:DB8:0:0:0:0:0:7', 'ip-2001-db8--7'],
      ['2001:db8:0:0:1:0:0:0', 'ip-2001-db8-0-0-1--0'],
      ['2001:db8:0:1:0:0:0:1', 'ip-2001-db8-0-1--1'],
      ['2001:db8:1:2:3:4:5:0', 'ip-2001-db8-1-2-3-4-5-0'],
      ['fe80:0:0:1::', 'ip-fe80-0-0-1--0'],
      // An IPv4-mapped address is its IPv4 address (api/ip.ts): one name for both spellings.
      ['::ffff:203.0.113.7', 'ip-203-0-113-7'],
    ] as const) {
      expect(ipObjectName(ip), ip).toBe(name);
      expect(name, ip).toMatch(dnsSubdomain);
    }
  });

  it('shapes an allocation placeholder: pool, no pin, no selector, no node ports, single stack', () => {
    const s = placeholderService({ name: 'x', namespace: 'ns', pool: 'iad-public', family: 'IPv4', claim: { namespace: 'tenant-a', name: 'web' } });
    expect(s.metadata?.annotations).toEqual({
      'metallb.io/address-pool': 'iad-public',
      'metallb.drivers.local.sdn.cozystack.io/claim-namespace': 'tenant-a',
      'metallb.drivers.local.sdn.cozystack.io/claim-name': 'web',
    });
    expect(s.metadata?.labels).toEqual({ 'metallb.drivers.local.sdn.cozystack.io/placeholder': 'true', 'metallb.drivers.local.sdn.cozystack.io/carrier': 'true' });
    expect(s.spec?.selector).toBeUndefined();
    expect(s.spec?.allocateLoadBalancerNodePorts).toBe(false);
    expect(s.spec?.ipFamilies).toEqual(['IPv4']);
  });

  it('shapes an IPv6 hold placeholder: pinned and linked', () => {
    const s = placeholderService({ name: 'x', namespace: 'ns', pool: 'iad-public', family: 'IPv6', pin: '2001:db8::7', addressName: 'ip-2001-db8--7' });
    expect(s.metadata?.annotations?.['metallb.io/loadBalancerIPs']).toBe('2001:db8::7');
    expect(s.metadata?.labels?.['metallb.drivers.local.sdn.cozystack.io/ip-address']).toBe('ip-2001-db8--7');
    expect(s.spec?.ipFamilies).toEqual(['IPv6']);
  });

  it('gives placeholders deterministic names', () => {
    expect(allocationPlaceholderName('u', 'IPv4')).not.toBe(allocationPlaceholderName('u', 'IPv6'));
    const address = (name: string, ip = '203.0.113.7') => ({ ...boundAddress(), metadata: { name }, spec: { ...boundAddress().spec, address: ip } });
    expect(holdPlaceholderName(address('ip-203-0-113-7'))).toBe('iad-ip-203-0-113-7');
    // An admin's name that makes no Service name: the hold is named after the IP instead.
    expect(holdPlaceholderName(address('public.203.0.113.7'))).toBe('iad-ip-203-0-113-7');
    expect(holdPlaceholderName(address(`edge-${'x'.repeat(60)}`, '2001:db8::'))).toBe('iad-ip-2001-db8--0');
  });
});

describe('IP ranges', () => {
  it('contains what a CIDR or range covers, and orders v4 before v6', () => {
    const cidr = parseRange('203.0.113.0/29');
    expect(typeof cidr).toBe('object');
    expect(rangeContains(cidr as never, '203.0.113.7')).toBe(true);
    expect(rangeContains(cidr as never, '203.0.113.8')).toBe(false);
    expect(rangeContains(parseRange('2001:db8::/126') as never, '2001:db8::3')).toBe(true);
    expect(rangeContains(parseRange('2001:db8::/126') as never, '203.0.113.1')).toBe(false);
    expect(['2001:db8::1', '203.0.113.10', '203.0.113.9'].sort(compareIps)).toEqual(['203.0.113.9', '203.0.113.10', '2001:db8::1']);
  });
});
