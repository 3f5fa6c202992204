import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseRange, type IpRange } from '../../../api/ip.js';
import { capacityOf, classBooks, familyExhausted } from '../../../controllers/metallb-iad/class-books.js';
import { bookStatus } from '../../../controllers/metallb-iad/class-status.js';
import { registerDriverMetrics } from '../../../controllers/metallb-iad/metrics.js';
import { boundAddress, publicClass, world } from './fixtures.js';

const ranges = (...texts: string[]) => texts.map((t) => parseRange(t) as IpRange);
const address = (ip: string, phase: string, extra: Record<string, unknown> = {}) => ({
  ...boundAddress({ phase: phase as 'Bound', ...extra }),
  metadata: { name: `ip-${ip.replace(/[.:]/g, '-')}`, uid: ip },
  spec: { ...boundAddress().spec, address: ip },
});

describe('a class’s books', () => {
  it('a family is exhausted when nothing of it is free, Lost addresses aside, and never below its capacity in records', () => {
    const small = publicClass({ parameters: { addresses: ['203.0.113.0/30'] } });
    const store = (...ips: [string, string][]) => ({
      addressesOfClass: () => ips.map(([ip, phase]) => address(ip, phase)),
      poolNamed: () => undefined,
    });
    expect(familyExhausted(store(['203.0.113.0', 'Bound'], ['203.0.113.1', 'Bound'], ['203.0.113.2', 'Bound']), small, 'IPv4')).toBe(false);
    expect(familyExhausted(store(['203.0.113.0', 'Bound'], ['203.0.113.1', 'Bound'], ['203.0.113.2', 'Bound'], ['203.0.113.3', 'Released']), small, 'IPv4')).toBe(true);
    expect(familyExhausted(store(['203.0.113.0', 'Bound'], ['203.0.113.1', 'Bound'], ['203.0.113.2', 'Bound'], ['198.51.100.9', 'Lost']), small, 'IPv4')).toBe(false);
    expect(familyExhausted(store(), small, 'IPv6')).toBe(true); // no IPv6 range: nothing to hand out
  });

  it('capacity is the size of the union of its ranges, exact for any IPv6 size', () => {
    expect(capacityOf(ranges('203.0.113.0/29'))).toBe(8n);
    expect(capacityOf(ranges('203.0.113.0/29', '203.0.113.4-203.0.113.11'))).toBe(12n);
    expect(capacityOf(ranges('2001:db8::/64'))).toBe(1n << 64n);
  });

  it('counts recorded addresses per family and phase; free leaves out what lies outside the ranges (Lost)', () => {
    const books = classBooks(
      ranges('203.0.113.0/29', '2001:db8::/126'),
      [
        address('203.0.113.1', 'Bound', { associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web' } }),
        address('203.0.113.2', 'Released'),
        address('203.0.113.3', 'Conflict'),
        address('198.51.100.9', 'Lost'),
        address('2001:db8::1', 'Available'),
      ],
      (a) => a.spec.address !== '203.0.113.1',
    );
    expect(books.map((b) => [b.family, b.capacity, b.recorded, b.free, b.held, b.attached, b.phases.Bound, b.phases.Lost])).toEqual([
      ['IPv4', 8n, 4, 5n, 3, 1, 1, 1],
      ['IPv6', 4n, 1, 3n, 1, 0, 0, 0],
    ]);
    expect(bookStatus(books)).toMatchObject({ capacity: '12', inUse: 5, free: '8' });
    expect(bookStatus(books).families![1]).toEqual({ family: 'IPv6', capacity: '4', recorded: 1, available: 1, bound: 0, released: 0, conflict: 0, lost: 0, free: '3' });
  });
});

describe('the driver’s metrics', () => {
  it('are computed from the caches at each scrape, one series per class, family and phase', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putClass({ ...publicClass(), metadata: { name: 'other', uid: 'o' }, spec: { ...publicClass().spec, provisioner: 'someone.else' } });
    w.cluster.putAddress(boundAddress());
    await w.reconcileAddress(); // a hold
    const registry = new Registry();
    const metrics = registerDriverMetrics(registry, w.cluster);
    metrics.backendFailure('public');
    const text = await registry.metrics();
    const sample = (line: string) => text.split('\n').find((l) => l.startsWith(line));
    expect(sample('cozy_addresses_class_capacity{class="public",family="IPv4"}')).toMatch(/ 8$/);
    expect(sample('cozy_addresses_class_free{class="public",family="IPv4"}')).toMatch(/ 7$/);
    expect(sample('cozy_addresses_class_addresses{class="public",family="IPv4",phase="Bound"}')).toMatch(/ 1$/);
    expect(sample('cozy_addresses_holds{class="public"}')).toMatch(/ 1$/);
    expect(sample('cozy_addresses_backend_failures_total{class="public"}')).toMatch(/ 1$/);
    expect(text).not.toContain('class="other"'); // another driver's class is not ours to count
    expect(sample('cozy_addresses_metallb_configuration_valid')).toBeUndefined(); // MetalLB reported nothing
  });
});
