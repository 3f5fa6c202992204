/** IP arithmetic for pool membership: addresses as bigints, CIDRs and MetalLB ranges. */
import { isIP } from 'node:net';

export interface IpRange {
  readonly family: 4 | 6;
  readonly first: bigint;
  readonly last: bigint;
}

export function ipToBigInt(ip: string): { family: 4 | 6; value: bigint } | undefined {
  const kind = isIP(ip);
  if (kind === 4) {
    return { family: 4, value: ip.split('.').reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n) };
  }
  if (kind === 6) {
    let text = ip.toLowerCase();
    const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
    if (v4) {
      const n = ipToBigInt(v4[1]!)!.value;
      text = text.slice(0, -v4[1]!.length) + `${((n >> 16n) & 0xffffn).toString(16)}:${(n & 0xffffn).toString(16)}`;
    }
    const [head, tail] = text.split('::') as [string, string | undefined];
    const left = head ? head.split(':') : [];
    const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
    const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
    return { family: 6, value: groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n) };
  }
  return undefined;
}

/**
 * The canonical text of an IP (RFC 5952 for IPv6: lowercase, no leading zeros,
 * the longest run of two or more zero groups compressed, the first on a tie;
 * IPv4-mapped addresses in dotted form), so one address always has one spelling.
 */
export function canonicalIp(ip: string): string | undefined {
  const parsed = ipToBigInt(ip);
  if (!parsed) {
    return undefined;
  }
  if (parsed.family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((parsed.value >> shift) & 0xffn)).join('.');
  }
  if (parsed.value >> 32n === 0xffffn) {
    return `::ffff:${canonicalIp(`${(parsed.value >> 24n) & 0xffn}.${(parsed.value >> 16n) & 0xffn}.${(parsed.value >> 8n) & 0xffn}.${parsed.value & 0xffn}`)}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) => (parsed.value >> BigInt(16 * (7 - i))) & 0xffffn);
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0n) {
      j++;
    }
    if (j - i > best.length) {
      best = { start: i, length: j - i };
    }
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.length < 2) {
    return hex.join(':');
  }
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}

/** A CIDR (`203.0.113.0/24`) or a MetalLB range (`203.0.113.10-203.0.113.20`); a message when invalid. */
export function parseRange(text: string): IpRange | string {
  const trimmed = text.trim();
  if (trimmed.includes('/')) {
    const [ip = '', bitsText = ''] = trimmed.split('/');
    const base = ipToBigInt(ip);
    const width = base?.family === 4 ? 32 : 128;
    const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
    if (!base) {
      return `"${text}" is not a CIDR: ${JSON.stringify(ip)} is not an IP address`;
    }
    if (!(bits >= 0 && bits <= width)) {
      return `"${text}" is not a CIDR: prefix length must be 0-${width}`;
    }
    const size = 1n << BigInt(width - bits);
    const first = (base.value / size) * size;
    return { family: base.family, first, last: first + size - 1n };
  }
  const dash = trimmed.split('-').map((s) => s.trim());
  if (dash.length === 2 && (ipToBigInt(dash[0]!) || ipToBigInt(dash[1]!))) {
    const [a = '', b = ''] = dash;
    const start = ipToBigInt(a);
    const end = ipToBigInt(b);
    if (!start || !end) {
      return `"${text}" is not a range: both ends must be IP addresses`;
    }
    if (start.family !== end.family) {
      return `"${text}" is not a range: the ends are of different families`;
    }
    if (start.value > end.value) {
      return `"${text}" is not a range: the first address is after the last`;
    }
    return { family: start.family, first: start.value, last: end.value };
  }
  return `"${text}" is neither a CIDR nor a range (a bare IP needs /32 or /128)`;
}

export function rangeContains(range: IpRange, ip: string): boolean {
  const parsed = ipToBigInt(ip);
  return Boolean(parsed && parsed.family === range.family && parsed.value >= range.first && parsed.value <= range.last);
}

/** v4 before v6, numerically within a family (the order of a Dual pin). */
export function compareIps(a: string, b: string): number {
  const x = ipToBigInt(a);
  const y = ipToBigInt(b);
  if (!x || !y) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (x.family !== y.family) {
    return x.family - y.family;
  }
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}

export function rangesOverlap(a: IpRange, b: IpRange): boolean {
  return a.family === b.family && a.first <= b.last && b.first <= a.last;
}
