/** The enumerations of the API, as plain constants the schemas and the controllers share. */

export const ADDRESS_PHASES = ['Pending', 'Available', 'Bound', 'Released', 'Conflict', 'Lost'] as const;
export type AddressPhase = (typeof ADDRESS_PHASES)[number];

export const CLAIM_PHASES = ['Pending', 'Bound', 'Lost'] as const;

export const ADDRESS_FAMILIES = ['IPv4', 'IPv6', 'Dual'] as const;

/** Whether a claim's addresses serve one Service or may be shared by several on disjoint ports (docs/driver.md, "Sharing"). */
export const CLAIM_SHARING = ['Exclusive', 'Shared'] as const;
export type ClaimSharing = (typeof CLAIM_SHARING)[number];

export const RECLAIM_POLICIES = ['Retain', 'Delete'] as const;
