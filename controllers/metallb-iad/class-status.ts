/**
 * What the driver says on a served class (docs/driver.md, "The class"): whether
 * its pool is written, and whether MetalLB applies its configuration at all.
 */
import { nextCondition, type Condition, type IPAddressClass, type IPAddressClassStatus } from '../../api/v1alpha1/index.js';
import type { FamilyBooks } from './class-books.js';
import type { MetallbObject } from './store.js';

export const CLASS_CONDITION = {
  /** Whether the class's IPAddressPool and L2Advertisement are written as the class says. */
  backendReady: 'BackendReady',
  /** Whether MetalLB reports that it applies its configuration (its ConfigurationState objects). */
  metallbConfigured: 'MetalLBConfigured',
} as const;

/** Why BackendReady is what it is. */
export const BACKEND_REASON = {
  poolWritten: 'PoolWritten',
  invalidClassParameters: 'InvalidClassParameters',
  /** Two entries of the class's own ranges overlap: MetalLB would refuse the pool and then every change. */
  overlappingRanges: 'OverlappingRanges',
  overlappingClassParameters: 'OverlappingClassParameters',
  overlapsForeignPool: 'OverlapsForeignPool',
  poolNotOwned: 'PoolNotOwned',
  backendFailed: 'BackendFailed',
} as const;
export type BackendReason = (typeof BACKEND_REASON)[keyof typeof BACKEND_REASON];

/** What the class pass found: the pool written, or why not. */
export interface BackendVerdict {
  readonly reason: BackendReason;
  readonly message: string;
}

/** MetalLB's own word on its configuration: valid, invalid (and why), or not reported. */
export type ConfigurationVerdict =
  | { readonly state: 'Valid' }
  | { readonly state: 'Invalid'; readonly message: string }
  | { readonly state: 'Unknown'; readonly message: string };

interface ConfigurationStateObject extends MetallbObject {
  status?: { result?: string; errorSummary?: string; conditions?: { status?: string; reason?: string; message?: string }[] };
}

/**
 * Reads MetalLB's ConfigurationState objects (one per component, v0.16+):
 * invalid when any says `result: Invalid` or has a False condition (a
 * configuration MetalLB refused, e.g. overlapping pools, after which it keeps
 * its previous one and ignores every later change).
 */
export function configurationVerdict(states: readonly MetallbObject[]): ConfigurationVerdict {
  if (states.length === 0) {
    return { state: 'Unknown', message: 'MetalLB reports no ConfigurationState (MetalLB older than v0.16, or not started yet)' };
  }
  const problems: string[] = [];
  for (const state of [...states].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')) as ConfigurationStateObject[]) {
    const failed = (state.status?.conditions ?? []).filter((c) => c.status === 'False');
    if (state.status?.result === 'Invalid' || failed.length > 0) {
      const why = state.status?.errorSummary || failed.map((c) => c.message || c.reason).filter(Boolean).join('; ') || 'invalid';
      problems.push(`${state.metadata.name}: ${why}`);
    }
  }
  return problems.length === 0 ? { state: 'Valid' } : { state: 'Invalid', message: problems.join('; ') };
}

/** The class's conditions as they should now read. */
export function classConditions(ipClass: IPAddressClass, backend: BackendVerdict, configuration: ConfigurationVerdict, now: string): Condition[] {
  const previous = ipClass.status?.conditions;
  const generation = ipClass.metadata.generation;
  const ready = backend.reason === BACKEND_REASON.poolWritten ? 'True' : 'False';
  const configured =
    configuration.state === 'Valid'
      ? { status: 'True' as const, reason: 'ConfigurationValid', message: 'MetalLB reports its configuration valid and applied' }
      : configuration.state === 'Invalid'
        ? {
            status: 'False' as const,
            reason: 'ConfigurationError',
            message: `MetalLB refuses its configuration and keeps the previous one, so no new pool or change is applied: ${configuration.message}`,
          }
        : { status: 'Unknown' as const, reason: 'NotReported', message: configuration.message };
  return [
    nextCondition(previous, { type: CLASS_CONDITION.backendReady, status: ready, reason: backend.reason, message: backend.message }, now, generation),
    nextCondition(previous, { type: CLASS_CONDITION.metallbConfigured, ...configured }, now, generation),
  ];
}

/** Whether two condition lists say the same (transition times aside: they only move with a status). */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[]): boolean {
  const key = (c: Condition) => `${c.type}\u0000${c.status}\u0000${c.reason}\u0000${c.message}\u0000${c.observedGeneration ?? ''}`;
  return (a ?? []).map(key).sort().join('\n') === b.map(key).sort().join('\n');
}

/** The counting part of a class's status, from its books (absent where the parameters give no ranges). */
export function bookStatus(books: readonly FamilyBooks[] | undefined): Omit<IPAddressClassStatus, 'conditions'> {
  if (!books) {
    return {};
  }
  const sum = (f: (b: FamilyBooks) => bigint) => books.reduce((n, b) => n + f(b), 0n).toString();
  return {
    capacity: sum((b) => b.capacity),
    inUse: books.reduce((n, b) => n + b.recorded, 0),
    free: sum((b) => b.free),
    families: books.map((b) => ({
      family: b.family,
      capacity: b.capacity.toString(),
      recorded: b.recorded,
      available: b.phases.Available,
      bound: b.phases.Bound,
      released: b.phases.Released,
      conflict: b.phases.Conflict,
      lost: b.phases.Lost,
      free: b.free.toString(),
    })),
  };
}
