/** The enumerations of the API, as plain constants the schemas and the controllers share. */

export const ADDRESS_PHASES = ['Pending', 'Available', 'Bound', 'Released', 'Conflict', 'Lost'] as const;
export type AddressPhase = (typeof ADDRESS_PHASES)[number];

export const CLAIM_PHASES = ['Pending', 'Bound', 'Lost'] as const;

export const ADDRESS_FAMILIES = ['IPv4', 'IPv6', 'Dual'] as const;

export const RECLAIM_POLICIES = ['Retain', 'Delete'] as const;
