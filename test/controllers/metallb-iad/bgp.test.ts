/** A class announced by BGP (docs/driver.md, "Announcing"): its parameters checked as MetalLB checks them, its BGPAdvertisement, a switch. */
import { describe, expect, it } from 'vitest';
import { parseRange, type IpRange } from '../../../api/ip.js';
import { coverPrefixes, parseAdvertisement } from '../../../controllers/metallb-iad/class-parameters.js';
import { boundAddress, publicClass, world } from './fixtures.js';

const ranges = (...texts: string[]) => texts.map((t) => parseRange(t) as IpRange);
const backendReady = (w: ReturnType<typeof world>) => w.cluster.ipClass('public')!.status?.conditions?.find((c) => c.type === 'BackendReady');
const bgpClass = (advertisement: unknown, addresses = ['203.0.113.0/29', '2001:db8::/126']) => publicClass({ parameters: { addresses, advertisement } });

describe('parameters.advertisement', () => {
  it('absent, or type L2: announced by L2', () => {
    expect(parseAdvertisement(undefined, [])).toEqual({ type: 'L2' });
    expect(parseAdvertisement({ type: 'L2' }, [])).toEqual({ type: 'L2' });
  });

  it('type BGP with every field MetalLB’s BGPAdvertisement takes from a class', () => {
    const value = { type: 'BGP', aggregationLength: 29, aggregationLengthV6: 126, localPref: 100, communities: ['65535:65282', 'large:1:2:3'], peers: ['upstream-a', 'upstream-b'] };
    expect(parseAdvertisement(value, ranges('203.0.113.0/29', '2001:db8::/126'))).toEqual(value);
  });

  it.each([
    [[], 'parameters.advertisement must be an object with type L2 or BGP'],
    [{ type: 'OSPF' }, 'parameters.advertisement.type must be L2 or BGP, got "OSPF"'],
    [{ type: 'L2', localPref: 100 }, 'parameters.advertisement.localPref applies to type BGP only'],
    [{ type: 'BGP', nodeSelectors: [] }, 'parameters.advertisement.nodeSelectors is not a field of a BGP advertisement (aggregationLength, aggregationLengthV6, localPref, communities, peers)'],
    [{ type: 'BGP', aggregationLength: 33 }, 'parameters.advertisement.aggregationLength must be an integer 0-32, got 33'],
    [{ type: 'BGP', aggregationLengthV6: -1 }, 'parameters.advertisement.aggregationLengthV6 must be an integer 0-128, got -1'],
    [{ type: 'BGP', localPref: 'high' }, 'parameters.advertisement.localPref must be an integer 0-4294967295, got "high"'],
    [{ type: 'BGP', communities: ['65536:1'] }, 'parameters.advertisement.communities[0] "65536:1": a community is <0-65535>:<0-65535>'],
    [{ type: 'BGP', communities: ['large:1:2'] }, 'parameters.advertisement.communities[0] "large:1:2": a community is <0-65535>:<0-65535> or large:<uint32>:<uint32>:<uint32>'],
    [{ type: 'BGP', communities: ['1:1', '1:1'] }, 'parameters.advertisement.communities[1] "1:1" is listed twice (MetalLB refuses duplicates)'],
    [{ type: 'BGP', peers: ['Upstream'] }, 'parameters.advertisement.peers[0] "Upstream": is not the name of a BGPPeer'],
    [{ type: 'BGP', aggregationLength: 24 }, 'parameters.advertisement.aggregationLength 24 is shorter than the /29 of parameters.addresses: MetalLB refuses an aggregation wider than the pool\'s own prefixes'],
  ])('%j is refused: %s', (value, message) => {
    expect(parseAdvertisement(value, ranges('203.0.113.0/29'))).toBe(message);
  });

  it('a range is judged by the widest CIDR MetalLB splits it into', () => {
    expect(coverPrefixes(ranges('203.0.113.0/29')[0]!)).toEqual([29]);
    expect(coverPrefixes(ranges('203.0.113.1-203.0.113.6')[0]!)).toEqual([32, 31, 31, 32]);
    expect(coverPrefixes(ranges('203.0.113.0-203.0.113.9')[0]!)).toEqual([29, 31]);
    // MetalLB refuses only when no CIDR of the entry fits: the widest (/29) sets the bound.
    expect(parseAdvertisement({ type: 'BGP', aggregationLength: 28 }, ranges('203.0.113.0-203.0.113.9'))).toMatch(/aggregationLength 28 is shorter than the \/29/);
    expect(parseAdvertisement({ type: 'BGP', aggregationLength: 30 }, ranges('203.0.113.0-203.0.113.9'))).toMatchObject({ type: 'BGP', aggregationLength: 30 });
  });
});

describe('a class announced by BGP', () => {
  it('renders its pool and a BGPAdvertisement (the CRD’s default aggregation lengths written out), and no L2Advertisement', async () => {
    const w = world();
    w.cluster.putClass(bgpClass({ type: 'BGP', localPref: 50, communities: ['64500:100'], peers: ['upstream'] }));
    await w.reconcileClass();
    expect(w.cluster.advertisement('public', 'BGPAdvertisement')).toMatchObject({
      kind: 'BGPAdvertisement',
      metadata: { name: 'iad-public', ownerReferences: [expect.objectContaining({ kind: 'IPAddressClass', name: 'public' })] },
      spec: { ipAddressPools: ['iad-public'], aggregationLength: 32, aggregationLengthV6: 128, localPref: 50, communities: ['64500:100'], peers: ['upstream'] },
    });
    expect(w.cluster.advertisement('public', 'L2Advertisement')).toBeUndefined();
    expect(backendReady(w)).toMatchObject({ status: 'True', message: expect.stringContaining('BGPAdvertisement') });
  });

  it('bad BGP parameters: InvalidClassParameters naming the field, nothing written', async () => {
    const w = world();
    w.cluster.putClass(bgpClass({ type: 'BGP', aggregationLength: 8 }));
    await w.reconcileClass();
    expect(backendReady(w)).toMatchObject({ status: 'False', reason: 'InvalidClassParameters', message: expect.stringContaining('parameters.advertisement.aggregationLength 8') });
    expect(w.cluster.pools.size).toBe(0);
  });

  it('switched from L2 to BGP and back: the pool and the addresses stay, the advertisement changes kind (the new one written before the old one goes)', async () => {
    const w = world();
    w.cluster.putClass(publicClass());
    w.cluster.putAddress(boundAddress());
    await w.reconcileClass();
    const pool = w.cluster.pools.get('IPAddressPool/iad-public');
    w.cluster.putClass(bgpClass({ type: 'BGP' }));
    w.cluster.log.length = 0;
    await w.reconcileClass();
    expect(w.cluster.log.filter((l) => /Advertisement/.test(l))).toEqual(['apply BGPAdvertisement/iad-public', 'delete L2Advertisement/iad-public']);
    expect(w.cluster.pools.get('IPAddressPool/iad-public')).toEqual(pool);
    expect(w.cluster.address('ip-203-0-113-1')?.status?.phase).toBe('Bound');

    w.cluster.putClass(publicClass());
    w.cluster.log.length = 0;
    await w.reconcileClass();
    expect(w.cluster.log.filter((l) => /Advertisement/.test(l))).toEqual(['apply L2Advertisement/iad-public', 'delete BGPAdvertisement/iad-public']);
    expect(w.cluster.pools.get('IPAddressPool/iad-public')).toEqual(pool);
  });

  it('a field dropped from the class is dropped from the advertisement; a pass that changes nothing writes nothing', async () => {
    const w = world();
    w.cluster.putClass(bgpClass({ type: 'BGP', localPref: 50 }));
    await w.reconcileClass();
    w.cluster.putClass(bgpClass({ type: 'BGP' }));
    w.cluster.log.length = 0;
    await w.reconcileClass();
    expect(w.cluster.log.filter((l) => l.startsWith('apply'))).toEqual(['apply BGPAdvertisement/iad-public']);
    expect(w.cluster.advertisement('public', 'BGPAdvertisement')?.spec).not.toHaveProperty('localPref');
    w.cluster.log.length = 0;
    await w.reconcileClass();
    expect(w.cluster.log.filter((l) => l.startsWith('apply'))).toEqual([]);
  });
});
