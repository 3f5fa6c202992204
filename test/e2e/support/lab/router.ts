/**
 * The lab's upstream router (issue 37): BIRD 2 (Debian's bird2) in its own
 * namespace, on the public segment beside the nodes and, over an uplink of its
 * own, in front of the client, which then reaches the class's addresses only
 * through the routes BIRD learned from the speakers by BGP.
 *
 *   client --uplink 198.51.100.224/28-- router --public 203.0.113.0/24-- nodes
 *
 * The uplink is carved from the pod segment's range; the nodes reach it
 * through the router by a more specific route than their pod segment's /24.
 * BIRD listens passively (the speakers connect), imports every route, exports
 * none, and installs what it learned into its namespace's own table, merging
 * equal paths (ECMP). IPv4 only: MetalLB's native BGP speaker is peered over
 * IPv4 here, and the L2 suites cover IPv6.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inNetns, ip, netSysctl } from './netns.js';
import { startIn } from './run-in.js';
import { assertDocumentation } from './safety.js';
import type { Started } from '../processes.js';
import { waitFor } from '../ports.js';

export const ROUTER_ASN = 64512;
export const SPEAKER_ASN = 64513;
/** The router on the public segment: what the admin's BGPPeer names. */
export const ROUTER_PUBLIC = { v4: '203.0.113.254', v6: '2001:db8:1::fe' } as const;
/** The uplink between the router and the client. */
export const UPLINK = { net: '198.51.100.224/28', router: '198.51.100.225', client: '198.51.100.226', prefix: 28 } as const;
/** BIRD's hold and keepalive (s): the shortest MetalLB accepts, so a cut node's routes go within seconds. */
export const HOLD_TIME_S = 3;

/**
 * The admin's BGPPeer naming the router. holdTime only: native mode refuses keepaliveTime (a
 * third of the hold time); peerPort written out, since the lab's apiserver stores it without the
 * CRD's default and the speaker would dial port 0.
 */
export function routerPeer(namespace: string) {
  return {
    apiVersion: 'metallb.io/v1beta2',
    kind: 'BGPPeer',
    metadata: { name: 'upstream', namespace },
    spec: { myASN: SPEAKER_ASN, peerASN: ROUTER_ASN, peerAddress: ROUTER_PUBLIC.v4, peerPort: 179, holdTime: `${HOLD_TIME_S}s` },
  };
}

const BIRD = process.env.BIRD ?? '/usr/sbin/bird';
const BIRDC = process.env.BIRDC ?? '/usr/sbin/birdc';

/** Why the router cannot run here, or undefined. */
export function routerUnavailable(): string | undefined {
  for (const binary of [BIRD, BIRDC]) {
    if (!existsSync(binary)) {
      return `${binary} is missing (Debian's bird2)`;
    }
  }
  return undefined;
}

export class LabRouter {
  private bird?: Started;
  private readonly socket: string;

  constructor(
    readonly ns: string,
    private readonly dir: string,
    private readonly logs: string,
  ) {
    this.socket = join(dir, 'bird.ctl');
  }

  /** Forwarding on (inside the router's namespace only), and the client's uplink: its far end is `clientIf` in `clientNs`. */
  wireUplink(clientNs: string, clientIf: string): void {
    for (const a of [UPLINK.router, UPLINK.client, ROUTER_PUBLIC.v4]) {
      assertDocumentation(a);
    }
    netSysctl(this.ns, 'net/ipv4/ip_forward', '1');
    ip(['-n', this.ns, 'link', 'add', 'uplink', 'type', 'veth', 'peer', 'name', clientIf, 'netns', clientNs]);
    ip(['-n', this.ns, 'addr', 'add', `${UPLINK.router}/${UPLINK.prefix}`, 'dev', 'uplink']);
    ip(['-n', this.ns, 'link', 'set', 'uplink', 'up']);
    ip(['-n', clientNs, 'addr', 'add', `${UPLINK.client}/${UPLINK.prefix}`, 'dev', clientIf]);
    ip(['-n', clientNs, 'link', 'set', clientIf, 'up']);
  }

  /** BIRD, peering passively with each node's public address. */
  async start(nodes: readonly { readonly name: string; readonly address: string }[]): Promise<void> {
    const config = [
      `router id ${ROUTER_PUBLIC.v4};`,
      'log stderr all;',
      'protocol device { scan time 1; }',
      // Into this namespace's own table: the only one BIRD can see.
      'protocol kernel { ipv4 { import none; export all; }; merge paths on; }',
      'template bgp speakers {',
      `  local ${ROUTER_PUBLIC.v4} as ${ROUTER_ASN};`,
      '  passive on;',
      `  hold time ${HOLD_TIME_S}; keepalive time 1; connect retry time 1; error wait time 1, 2;`,
      '  ipv4 { import all; export none; };',
      '}',
      ...nodes.map((n) => `protocol bgp ${n.name} from speakers { neighbor ${n.address} as ${SPEAKER_ASN}; }`),
      '',
    ].join('\n');
    const file = join(this.dir, 'bird.conf');
    writeFileSync(file, config);
    this.bird = startIn(this.ns, 'bird', BIRD, ['-f', '-c', file, '-s', this.socket, '-P', join(this.dir, 'bird.pid')], this.logs);
    await waitFor(`BIRD answering (${this.bird.tail(5)})`, async () => this.protocols().length === nodes.length, 15_000);
  }

  /** BIRD's BGP sessions: name and state (`Established` once up). */
  protocols(): { name: string; state: string }[] {
    let out = '';
    try {
      out = inNetns(this.ns, BIRDC, ['-s', this.socket, 'show', 'protocols']);
    } catch {
      return [];
    }
    return out
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[1] === 'BGP')
      .map((f) => ({ name: f[0]!, state: f.slice(5).join(' ') || f[3]! }));
  }

  /** The next hops the router's kernel table has for `ip` from BGP (none: no route learned). */
  nextHops(address: string): string[] {
    const out = ip(['-n', this.ns, '-4', 'route', 'show', 'proto', 'bird', `${address}/32`]);
    return [...out.matchAll(/via (\S+)/g)].map((m) => m[1]!).sort();
  }

  /** Every prefix the router learned by BGP. */
  learned(): string[] {
    return ip(['-n', this.ns, '-4', 'route', 'show', 'proto', 'bird'])
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[0] ?? '')
      .filter(Boolean);
  }

  /** What the router listens on, its addresses and the resets it sent, for a failure's message. */
  describe(): string {
    const run = (command: string, args: string[]) => {
      try {
        return inNetns(this.ns, command, args).trim();
      } catch (error) {
        return (error as Error).message;
      }
    };
    // Resets sent while BIRD listens mean the speakers dial another address or port.
    return `listening: ${run('ss', ['-ltn'])}\naddresses: ${run('ip', ['-4', '-brief', 'addr'])}\nresets sent: ${run('nstat', ['-az', 'TcpOutRsts'])}`;
  }

  log(lines: number): string {
    return this.bird?.tail(lines) ?? '';
  }
}
