/** What a served class asks for (`spec.parameters.addresses`), and whether an address still lies in it. */
import type { IPAddress, IPAddressClass } from '../../api/v1alpha1/index.js';
import { parseRange, rangeContains, type IpRange } from '../../api/ip.js';
import { DRIVER } from './well-known.js';

export type ClassParameters = { readonly ok: true; readonly addresses: string[]; readonly ranges: IpRange[] } | { readonly ok: false; readonly message: string };

/** `spec.parameters.addresses`: a non-empty list of CIDRs or MetalLB ranges; unknown keys are ignored. */
export function parseClassParameters(ipClass: IPAddressClass): ClassParameters {
  const parameters = ipClass.spec.parameters;
  if (!parameters || typeof parameters !== 'object') {
    return { ok: false, message: 'class has no parameters; this driver requires parameters.addresses' };
  }
  const list = (parameters as { addresses?: unknown }).addresses;
  if (!Array.isArray(list)) {
    return { ok: false, message: 'parameters.addresses must be a list of CIDRs or ranges' };
  }
  if (list.length === 0) {
    return { ok: false, message: 'parameters.addresses names no addresses' };
  }
  const ranges: IpRange[] = [];
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') {
      return { ok: false, message: `parameters.addresses[${i}] must be a string, got ${JSON.stringify(entry)}` };
    }
    const range = parseRange(entry);
    if (typeof range === 'string') {
      return { ok: false, message: `parameters.addresses[${i}]: ${range}` };
    }
    ranges.push(range);
  }
  return { ok: true, addresses: list as string[], ranges };
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
