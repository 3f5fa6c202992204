/**
 * The one IP model of the project: parsing, canonical text, family, CIDRs and
 * MetalLB ranges, used by both controllers, the constructs and the e2e audit.
 *
 * One rule for IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2):
 * they ARE the IPv4 address a.b.c.d. They parse to family 4 with the IPv4
 * value, so their family is IPv4, an IPv4 range contains them, and their
 * canonical text is the dotted quad. Nothing else in IPv6 is treated as IPv4.
 */
import { isIP } from 'node:net';

export type Family = 'IPv4' | 'IPv6';

export interface IpRange {
  readonly family: 4 | 6;
  readonly first: bigint;
  readonly last: bigint;
}

const MAPPED_PREFIX = 0xffffn;

/** An IP as its family and numeric value; IPv4-mapped IPv6 comes back as IPv4. */
export function parseIp(ip: string): { family: 4 | 6; value: bigint } | undefined {
  const parsed = parseLiteral(ip);
  if (parsed?.family === 6 && parsed.value >> 32n === MAPPED_PREFIX) {
    return { family: 4, value: parsed.value & 0xffffffffn };
  }
  return parsed;
}

/** The family of an address; undefined when it does not parse. */
export function familyOf(ip: string): Family | undefined {
  const parsed = parseIp(ip);
  return parsed ? (parsed.family === 4 ? 'IPv4' : 'IPv6') : undefined;
}

function parseLiteral(ip: string): { family: 4 | 6; value: bigint } | undefined {
  const kind = isIP(ip);
  if (kind === 4) {
    return { family: 4, value: ip.split('.').reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n) };
  }
  if (kind === 6) {
    let text = ip.toLowerCase();
    const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
    if (v4) {
      const n = parseLiteral(v4[1]!)!.value;
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
 * an IPv4-mapped address as its IPv4 dotted quad), so one address always has
 * one spelling.
 */
export function canonicalIp(ip: string): string | undefined {
  const parsed = parseIp(ip);
  if (!parsed) {
    return undefined;
  }
  if (parsed.family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((parsed.value >> shift) & 0xffn)).join('.');
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
    const base = parseIp(ip);
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
  if (dash.length === 2 && (parseIp(dash[0]!) || parseIp(dash[1]!))) {
    const [a = '', b = ''] = dash;
    const start = parseIp(a);
    const end = parseIp(b);
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
  const parsed = parseIp(ip);
  return Boolean(parsed && parsed.family === range.family && parsed.value >= range.first && parsed.value <= range.last);
}

/** v4 before v6, numerically within a family (the order of a Dual pin). */
export function compareIps(a: string, b: string): number {
  const x = parseIp(a);
  const y = parseIp(b);
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
