/**
 * The lab's addresses, all from documentation ranges:
 *
 *   public segment  203.0.113.0/24, 2001:db8:1::/64   client, nodes, and the class's pool
 *   pod segment     198.51.100.0/24, 2001:db8:2::/64  nodes and workloads (the "pod network")
 *
 * The class pool lies on the public segment, so the client asks ARP/NDP for a
 * reserved address directly and the speaker that won it answers. 192.0.2.0/24
 * is left out on purpose: machines like this one use it for their own uplink.
 */
export const PUBLIC = { v4: '203.0.113.0/24', v6: '2001:db8:1::/64' } as const;
export const POD = { v4: '198.51.100.0/24', v6: '2001:db8:2::/64' } as const;
/** The ranges of the class the lab's tests reserve from (inside PUBLIC, clear of every host below). */
export const POOL = { v4: '203.0.113.128/26', v6: '2001:db8:1::100/120' } as const;

export const LAB_RANGES = [PUBLIC.v4, PUBLIC.v6, POD.v4, POD.v6] as const;

export interface HostAddresses {
  readonly v4: string;
  readonly v6: string;
}

export const CLIENT: HostAddresses = { v4: '203.0.113.2', v6: '2001:db8:1::2' };

/** Node i (1-based) on each segment. */
export function nodeAddresses(i: number): { pub: HostAddresses; pod: HostAddresses } {
  return { pub: { v4: `203.0.113.${10 + i}`, v6: `2001:db8:1::${10 + i}` }, pod: { v4: `198.51.100.${10 + i}`, v6: `2001:db8:2::${10 + i}` } };
}

/** Workload j (1-based) on the pod segment. */
export function workloadAddresses(j: number): HostAddresses {
  return { v4: `198.51.100.${100 + j}`, v6: `2001:db8:2::${100 + j}` };
}

/** Prefix lengths of the segments. */
export const PREFIX = { v4: 24, v6: 64 } as const;

/** The port every workload listens on; Services map their port 80 to it. */
export const WORKLOAD_PORT = 8080;
/** Inside each node namespace, the relay to the apiserver listens here on loopback. */
export const RELAY_PORT = 16443;

/**
 * The node suite (kubelet + containerd on a lab node): the Pods' bridge subnet, inside the pod
 * segment's range but clear of its hosts; the address the apiserver advertises, which that node
 * answers on (a relay to the apiserver), so that a Pod's in-cluster connection to the
 * `kubernetes` Service reaches it; and the port of the node's relay to the e2e registry.
 */
export const KUBELET_POD_CIDR = '198.51.100.192/27';
export const API_ADVERTISE_ADDRESS = '203.0.113.250';
export const REGISTRY_RELAY_PORT = 15000;
