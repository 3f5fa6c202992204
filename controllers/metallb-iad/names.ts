/** The names the driver gives what it creates: pools, IPAddresses, placeholders. One IP, one name. */
import type { IPAddress } from '../../api/v1alpha1/index.js';
import { canonicalIp } from '../../api/ip.js';
import { isServiceName } from '../../api/names.js';

const POOL_PREFIX = 'iad-';
export const poolName = (className: string) => `${POOL_PREFIX}${className}`;
/** The class a pool or advertisement name would belong to (poolName inverted), if it has the driver's prefix. */
export const classNameOfPool = (name: string) => (name.startsWith(POOL_PREFIX) ? name.slice(POOL_PREFIX.length) : undefined);
/**
 * `ip-` and the canonical IP with `.` and `:` as `-` (ip-203-0-113-7, ip-2001-db8--7): one object
 * per IP, so the name is the lock. An IPv6 address ending in `::` would end the name in `-`, which
 * Kubernetes refuses, so it is spelled with its last zero group (`2001:db8::` is ip-2001-db8--0).
 */
export function ipObjectName(ip: string): string {
  const name = `ip-${(canonicalIp(ip) ?? ip).replace(/[.:]/g, '-')}`;
  return name.endsWith('-') ? `${name}0` : name;
}
export const allocationPlaceholderName = (claimUid: string, family: 'IPv4' | 'IPv6') => `iad-${claimUid}-${family === 'IPv4' ? 'v4' : 'v6'}`;
/**
 * `iad-<IPAddress name>`; where that is no valid Service name (an admin named the address with
 * dots, or at length), `iad-` and the name the IP would get, which is always one.
 */
export function holdPlaceholderName(address: IPAddress): string {
  const name = `iad-${address.metadata.name}`;
  return isServiceName(name) ? name : `iad-${ipObjectName(address.spec.address)}`;
}
