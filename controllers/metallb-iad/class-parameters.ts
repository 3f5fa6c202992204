/**
 * What a served class asks for: its own ranges (`spec.parameters.addresses`), or an existing
 * IPAddressPool it takes over (`spec.parameters.pool`, docs/adoption.md); and whether an address
 * still lies in it.
 */
import type { IPAddress, IPAddressClass } from '../../api/v1alpha1/index.js';
import { isDnsLabel } from '../../api/names.js';
import { parseRange, rangeContains, type IpRange } from '../../api/ip.js';
import { poolName } from './names.js';
import type { MetallbObject } from './store.js';
import { DRIVER, SERVED_BY_CLASS_ANNOTATION } from './well-known.js';

export type ClassParameters =
  | { readonly ok: true; readonly addresses: string[]; readonly ranges: IpRange[]; readonly adoptedPool?: string }
  | { readonly ok: false; readonly message: string };

/** Looks an IPAddressPool up by name in MetalLB's namespace. */
export type PoolLookup = (name: string) => MetallbObject | undefined;

interface Parameters {
  readonly addresses?: unknown;
  readonly pool?: unknown;
}

/**
 * `spec.parameters.addresses`, a non-empty list of CIDRs or MetalLB ranges; or
 * `spec.parameters.pool`, the name of an IPAddressPool in MetalLB's namespace
 * whose addresses the class comes to serve (read through `pools`); unknown keys
 * are ignored.
 */
export function parseClassParameters(ipClass: IPAddressClass, pools?: PoolLookup): ClassParameters {
  const parameters = ipClass.spec.parameters as Parameters | undefined;
  if (!parameters || typeof parameters !== 'object') {
    return { ok: false, message: 'class has no parameters; this driver requires parameters.addresses or parameters.pool' };
  }
  if (parameters.pool !== undefined) {
    return adoptedPoolParameters(ipClass, parameters, pools);
  }
  const parsed = parseAddresses(parameters.addresses, 'parameters.addresses');
  return typeof parsed === 'string' ? { ok: false, message: parsed } : { ok: true, ...parsed };
}

function adoptedPoolParameters(ipClass: IPAddressClass, parameters: Parameters, pools: PoolLookup | undefined): ClassParameters {
  const name = parameters.pool;
  if (parameters.addresses !== undefined) {
    return { ok: false, message: 'set parameters.addresses or parameters.pool, not both' };
  }
  if (typeof name !== 'string' || !isDnsLabel(name)) {
    return { ok: false, message: `parameters.pool must name an IPAddressPool, got ${JSON.stringify(name)}` };
  }
  const pool = pools?.(name);
  if (!pool) {
    return { ok: false, message: `parameters.pool: IPAddressPool ${name} not found in MetalLB's namespace` };
  }
  const owner = (pool.metadata.ownerReferences ?? []).find((o) => o.kind === 'IPAddressClass');
  if (owner) {
    return { ok: false, message: `parameters.pool: IPAddressPool ${name} is the pool of IPAddressClass ${owner.name}` };
  }
  const servedBy = pool.metadata.annotations?.[SERVED_BY_CLASS_ANNOTATION];
  if (servedBy && servedBy !== ipClass.metadata.name) {
    return { ok: false, message: `parameters.pool: IPAddressPool ${name} is served by IPAddressClass ${servedBy} already` };
  }
  const parsed = parseAddresses(pool.spec?.addresses, `IPAddressPool ${name} spec.addresses`);
  return typeof parsed === 'string' ? { ok: false, message: parsed } : { ok: true, ...parsed, adoptedPool: name };
}

function parseAddresses(list: unknown, field: string): { addresses: string[]; ranges: IpRange[] } | string {
  if (!Array.isArray(list)) {
    return `${field} must be a list of CIDRs or ranges`;
  }
  if (list.length === 0) {
    return `${field} names no addresses`;
  }
  const ranges: IpRange[] = [];
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') {
      return `${field}[${i}] must be a string, got ${JSON.stringify(entry)}`;
    }
    const range = parseRange(entry);
    if (typeof range === 'string') {
      return `${field}[${i}]: ${range}`;
    }
    ranges.push(range);
  }
  return { addresses: list as string[], ranges };
}

/**
 * The IPAddressPool a class's reservations live in: the pool it took over, or
 * the one it renders (`iad-<class>`). Placeholders ask for it by name.
 */
export function backingPoolName(ipClass: IPAddressClass): string {
  const pool = (ipClass.spec.parameters as Parameters | undefined)?.pool;
  return typeof pool === 'string' && pool ? pool : poolName(ipClass.metadata.name!);
}

export function servedBy(ipClass: IPAddressClass | undefined): boolean {
  return ipClass?.spec.provisioner === DRIVER;
}

/** Whether the address's backing reservation exists: its IP lies in the class's pool. */
export function reservationExists(address: IPAddress, pool: { spec?: { addresses?: string[] } } | undefined): boolean {
  if (!pool) {
    return false;
  }
  return (pool.spec?.addresses ?? []).some((text) => {
    const range = parseRange(text);
    return typeof range !== 'string' && rangeContains(range, address.spec.address);
  });
}
