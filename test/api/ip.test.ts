import { describe, expect, it } from 'vitest';
import { canonicalIp, compareIps, familyOf, parseIp, parseRange, rangeContains, type IpRange } from '../../api/ip.js';

const range = (text: string) => parseRange(text) as IpRange;

describe('one IP model: an IPv4-mapped IPv6 address is its IPv4 address', () => {
  it.each(['::ffff:203.0.113.7', '::FFFF:cb00:7107', '0:0:0:0:0:ffff:203.0.113.7'])('%s', (mapped) => {
    expect(familyOf(mapped)).toBe('IPv4');
    expect(canonicalIp(mapped)).toBe('203.0.113.7');
    expect(parseIp(mapped)).toEqual(parseIp('203.0.113.7'));
    // The family and the range containment agree (they did not: IPv4 by family, outside every IPv4 range).
    expect(rangeContains(range('203.0.113.0/24'), mapped)).toBe(true);
    expect(rangeContains(range('203.0.113.0-203.0.113.10'), mapped)).toBe(true);
    expect(rangeContains(range('2001:db8::/32'), mapped)).toBe(false);
    expect(compareIps(mapped, '203.0.113.7')).toBe(0);
  });

  it('keeps every other IPv6 address IPv6, including the IPv4-compatible and NAT64 forms', () => {
    for (const ip of ['::203.0.113.7', '64:ff9b::203.0.113.7', '2001:db8::1', '::1', '::']) {
      expect(familyOf(ip), ip).toBe('IPv6');
      expect(rangeContains(range('203.0.113.0/24'), ip), ip).toBe(false);
    }
  });

  it('has no family for what does not parse', () => {
    for (const text of ['', '203.0.113', '203.0.113.256', 'not-an-ip', '2001:db8:::1']) {
      expect(familyOf(text), text).toBeUndefined();
      expect(canonicalIp(text), text).toBeUndefined();
    }
  });
});
