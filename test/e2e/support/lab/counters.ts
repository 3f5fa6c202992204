/**
 * The kernel's own counters inside each lab namespace (TCP, IP, conntrack),
 * read-only: a snapshot before a fault and one after say where packets went
 * missing when requests failed (a SYN retransmitted by the client, a
 * conntrack entry refused on a node, a listen queue overflowing at a workload).
 */
import { inNetns } from './netns.js';

export type Counters = Record<string, Record<string, number>>;

/** `/proc/net/netstat` and `/proc/net/snmp`: pairs of header and value lines. */
function parsePairs(text: string, into: Record<string, number>): void {
  const lines = text.trim().split('\n');
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const keys = lines[i]!.trim().split(/\s+/);
    const values = lines[i + 1]!.trim().split(/\s+/);
    const prefix = keys[0]!.replace(/:$/, '');
    keys.slice(1).forEach((k, j) => {
      const v = Number(values[j + 1]);
      if (Number.isFinite(v)) {
        into[`${prefix}.${k}`] = v;
      }
    });
  }
}

/** `/proc/net/stat/nf_conntrack`: a header, then one line of hex per CPU; summed. */
function parseConntrack(text: string, into: Record<string, number>): void {
  const [header, ...rows] = text.trim().split('\n');
  const keys = header!.trim().split(/\s+/);
  for (const row of rows) {
    row.trim().split(/\s+/).forEach((hex, j) => {
      const key = `conntrack.${keys[j]}`;
      if (keys[j] !== 'entries') {
        into[key] = (into[key] ?? 0) + parseInt(hex, 16);
      } else {
        into[key] = parseInt(hex, 16);
      }
    });
  }
}

export function readCounters(namespaces: readonly string[]): Counters {
  const all: Counters = {};
  for (const ns of namespaces) {
    const c: Record<string, number> = {};
    parsePairs(inNetns(ns, 'cat', ['/proc/net/netstat']), c);
    parsePairs(inNetns(ns, 'cat', ['/proc/net/snmp']), c);
    try {
      parseConntrack(inNetns(ns, 'cat', ['/proc/net/stat/nf_conntrack']), c);
    } catch {
      // no conntrack in this namespace yet
    }
    all[ns] = c;
  }
  return all;
}

/** What grew between two snapshots, for counters that speak of loss or retries, as "ns: key +n" lines. */
export function counterGrowth(before: Counters, after: Counters, short: (ns: string) => string = (ns) => ns): string[] {
  const telling = /^Icmp|Retrans|Drop|Overflow|Fail|Err|Invalid|invalid|drop|insert_failed|early_drop|clash|PAWS|Challenge|Abort|Reset|Rst|Timeout|Loss|Prune|Backlog|Queue/;
  const lines: string[] = [];
  for (const [ns, counters] of Object.entries(after)) {
    const grown = Object.entries(counters)
      .filter(([k, v]) => telling.test(k) && v > (before[ns]?.[k] ?? 0))
      .map(([k, v]) => `${k} +${v - (before[ns]?.[k] ?? 0)}`);
    if (grown.length) {
      lines.push(`${short(ns)}: ${grown.join(', ')}`);
    }
  }
  return lines;
}
