/**
 * The lab's cabling. The two L2 segments are bridges inside a dedicated
 * "switch" namespace; every host namespace gets one veth per segment it joins,
 * created inside the switch namespace with its far end born in the host's
 * namespace. Nothing is ever created in, or moved through, the machine's own
 * namespace.
 */
import { ip, netSysctl } from './netns.js';
import { assertDocumentation } from './safety.js';
import { PREFIX, type HostAddresses } from './plan.js';

export type SegmentName = 'pub' | 'pod';

/** Makes a namespace with loopback up and IPv6 duplicate-address detection off (addresses are usable at once). */
export function makeNamespace(ns: string): void {
  ip(['netns', 'add', ns]);
  ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  // Set before any veth arrives: an interface takes the namespace's defaults when it is moved in.
  netSysctl(ns, 'net/ipv6/conf/default/accept_dad', '0');
  netSysctl(ns, 'net/ipv6/conf/all/accept_dad', '0');
  netSysctl(ns, 'net/ipv6/conf/default/accept_ra', '0');
}

/** The switch: one bridge per segment, multicast snooping off so NDP's solicited-node multicast always floods. */
export function makeSwitch(ns: string): void {
  makeNamespace(ns);
  for (const segment of ['pub', 'pod'] as const) {
    ip(['-n', ns, 'link', 'add', segment, 'type', 'bridge', 'mcast_snooping', '0']);
    ip(['-n', ns, 'link', 'set', segment, 'up']);
  }
}

/**
 * Cables host namespace `host` into `segment` as interface `ifname` with the
 * given addresses. `port` names the switch side (at most 15 characters).
 */
export function plug(switchNs: string, segment: SegmentName, port: string, host: string, ifname: string, addresses: HostAddresses): void {
  if (port.length > 15 || ifname.length > 15) {
    throw new Error(`lab: interface names are at most 15 characters (${port}, ${ifname})`);
  }
  assertDocumentation(addresses.v4);
  assertDocumentation(addresses.v6);
  ip(['-n', switchNs, 'link', 'add', port, 'type', 'veth', 'peer', 'name', ifname, 'netns', host]);
  ip(['-n', switchNs, 'link', 'set', port, 'master', segment]);
  ip(['-n', switchNs, 'link', 'set', port, 'up']);
  ip(['-n', host, 'addr', 'add', `${addresses.v4}/${PREFIX.v4}`, 'dev', ifname]);
  ip(['-n', host, 'addr', 'add', `${addresses.v6}/${PREFIX.v6}`, 'dev', ifname, 'nodad']);
  ip(['-n', host, 'link', 'set', ifname, 'up']);
}

/** Takes the switch side of a cable down or up again: the host drops off the segment as if unplugged. */
export function setPort(switchNs: string, port: string, up: boolean): void {
  ip(['-n', switchNs, 'link', 'set', port, up ? 'up' : 'down']);
}

/** The interface the kernel would send to `target` from inside `ns`, or undefined when it has no route. */
export function routeDevice(ns: string, target: string): string | undefined {
  try {
    const out = ip(['-n', ns, target.includes(':') ? '-6' : '-4', 'route', 'get', target]);
    return /\sdev\s+(\S+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}
