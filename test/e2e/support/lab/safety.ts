/**
 * The data-path lab's network rules, checked rather than trusted:
 * - every address the lab configures or sends to lies in a documentation range
 *   (RFC 5737, RFC 3849);
 * - none of those ranges is one the machine itself uses (this machine's own
 *   uplink may well sit in 192.0.2.0/24), so the lab can never shadow it;
 * - the machine's own namespace keeps its interfaces, addresses, routes and
 *   firewall: a snapshot taken before the lab is built is compared after it is gone.
 */
import { execFileSync } from 'node:child_process';
import { parseRange, rangeContains, rangesOverlap, type IpRange } from '../../../../api/ip.js';

export const DOCUMENTATION_RANGES = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'] as const;

const documentation = DOCUMENTATION_RANGES.map((r) => parseRange(r) as IpRange);

function range(text: string): IpRange {
  const parsed = parseRange(text.includes('/') || text.includes('-') ? text : `${text}/${text.includes(':') ? 128 : 32}`);
  if (typeof parsed === 'string') {
    throw new Error(`lab safety: ${parsed}`);
  }
  return parsed;
}

/** Throws unless the IP or CIDR lies wholly inside one documentation range. */
export function assertDocumentation(ipOrCidr: string): void {
  const r = range(ipOrCidr);
  const inside = documentation.some((d) => d.family === r.family && d.first <= r.first && r.last <= d.last);
  if (!inside) {
    throw new Error(`lab safety: ${ipOrCidr} is outside the documentation ranges (${DOCUMENTATION_RANGES.join(', ')}); the lab uses nothing else`);
  }
}

export function contains(cidr: string, ip: string): boolean {
  return rangeContains(range(cidr), ip);
}

/** The host's own prefixes (addresses and non-default routes of the root namespace), read-only. */
function hostPrefixes(): string[] {
  const prefixes: string[] = [];
  for (const family of ['-4', '-6']) {
    for (const line of run('ip', [family, '-o', 'addr', 'show']).split('\n')) {
      const m = /\sinet6?\s+(\S+)/.exec(line);
      if (m) {
        prefixes.push(m[1]!);
      }
    }
    for (const line of run('ip', [family, 'route', 'show', 'table', 'all']).split('\n')) {
      const first = line.trim().split(/\s+/);
      // "local 127.0.0.1 ...", "broadcast ...", "unicast ..." carry their type first.
      const dest = ['local', 'broadcast', 'unicast', 'multicast', 'anycast', 'unreachable', 'blackhole', 'prohibit'].includes(first[0] ?? '') ? first[1] : first[0];
      if (dest && dest !== 'default' && /^[0-9a-f.:]+(\/\d+)?$/i.test(dest)) {
        prefixes.push(dest);
      }
    }
  }
  return prefixes;
}

/** Throws if any lab range overlaps a prefix the machine's own namespace uses (other than a default route). */
export function assertHostDoesNotUse(labRanges: readonly string[]): void {
  const host = hostPrefixes();
  for (const lab of labRanges) {
    const l = range(lab);
    for (const prefix of host) {
      let h: IpRange;
      try {
        h = range(prefix);
      } catch {
        continue;
      }
      if (rangesOverlap(l, h)) {
        throw new Error(`lab safety: the lab range ${lab} overlaps ${prefix}, which this machine's own namespace uses; refusing to build the lab`);
      }
    }
  }
}

/**
 * What the machine's own namespace looks like, read-only: links (without
 * counters), addresses and routes (without lifetimes, which tick), policy rules,
 * and the nftables ruleset where nft is installed.
 */
export function hostSnapshot(): string {
  const strip = (text: string) =>
    text
      .split('\n')
      .map((l) => l.replace(/\s+(valid_lft|preferred_lft)\s+\S+/g, '').replace(/\s+expires\s+\S+/g, '').replace(/\s+used\s+\S+/g, '').trimEnd())
      .join('\n');
  const parts = [
    run('ip', ['-o', 'link', 'show']),
    run('ip', ['-o', 'addr', 'show']),
    run('ip', ['-4', 'route', 'show', 'table', 'all']),
    run('ip', ['-6', 'route', 'show', 'table', 'all']),
    run('ip', ['rule', 'show']),
    run('ip', ['-6', 'rule', 'show']),
    tryRun('nft', ['list', 'ruleset']) ?? '(nft not installed)',
  ];
  return parts.map(strip).join('\n----\n');
}

/** Throws naming the first line that differs between two snapshots. */
export function assertHostUnchanged(before: string, after: string): void {
  if (before === after) {
    return;
  }
  const a = before.split('\n');
  const b = after.split('\n');
  const i = a.findIndex((line, n) => line !== b[n]);
  throw new Error(`lab safety: the machine's own namespace changed while the lab ran: before ${JSON.stringify(a[i] ?? '')}, after ${JSON.stringify(b[i] ?? '')}`);
}

function run(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryRun(command: string, args: string[]): string | undefined {
  try {
    return run(command, args);
  } catch {
    return undefined;
  }
}
