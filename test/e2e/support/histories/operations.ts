/**
 * The operations of a history and the generator that draws them. The draw
 * depends only on the PRNG and on what the history itself has asked for (the
 * model), never on what the cluster answered: one seed is one sequence of
 * operations on every run. What the cluster makes of them is what is tested.
 */
import type { Rng } from './prng.js';
import { BAD_CLASS_NAMES, BAD_CLASS_SHAPES, badClassAddresses, CLAIM_NAMES, CLASSES, MISSING_CLAIM, SERVICE_NAMES, TENANTS, type BadClassShape, type ClaimFamily } from './world.js';

/** How a Service asks for ClusterIP families: v4/v6 SingleStack, dual RequireDualStack, prefer-dual PreferDualStack. */
export type Stack = 'v4' | 'v6' | 'dual' | 'prefer-dual';
export type Victim = 'core' | 'driver';
/** The fields of a claim's spec that are immutable once set (the PersistentVolumeClaim rules). */
export type ClaimField = 'className' | 'family' | 'addressName';
export const CLAIM_FIELDS: readonly ClaimField[] = ['className', 'family', 'addressName'];

export type Operation =
  | { readonly kind: 'createClaim'; readonly namespace: string; readonly name: string; readonly className: string; readonly family: ClaimFamily }
  | { readonly kind: 'deleteClaim'; readonly namespace: string; readonly name: string }
  /** `wrongFamily`: the stack deliberately cannot carry the claim's family. */
  | { readonly kind: 'createService'; readonly namespace: string; readonly name: string; readonly claim?: string; readonly stack: Stack; readonly wrongFamily: boolean }
  | { readonly kind: 'deleteService'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'annotate'; readonly namespace: string; readonly name: string; readonly claim: string }
  | { readonly kind: 'unannotate'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'setType'; readonly namespace: string; readonly name: string; readonly type: 'LoadBalancer' | 'ClusterIP' }
  /** The IP is that of the `pick`-th recorded IPAddress (by name) when the operation runs. */
  | { readonly kind: 'adminPin'; readonly name: string; readonly pick: number }
  | { readonly kind: 'adminUnpin'; readonly name: string }
  /** The `pick`-th Released IPAddress (by name), if any, is deleted by the admin (recycling a Retain class). */
  | { readonly kind: 'adminDeleteReleased'; readonly pick: number }
  /** An admin's mistake: a class whose own ranges overlap (world.ts, `badClassAddresses`). */
  | { readonly kind: 'createBadClass'; readonly name: string; readonly shape: BadClassShape; readonly pick: number }
  | { readonly kind: 'deleteBadClass'; readonly name: string }
  /**
   * An admin's mistake: an IPAddress of the IP of the `pick`-th recorded IPAddress (by name) when the
   * operation runs, of its class, bound to nothing; an IPv4 one spelled ::ffff:a.b.c.d if `mapped`.
   */
  | { readonly kind: 'duplicateAddress'; readonly name: string; readonly pick: number; readonly mapped: boolean }
  /** An admin's mistake: a spec edit of a claim the apiserver must refuse (the value is `pick`-th of those it may not take). */
  | { readonly kind: 'editClaim'; readonly namespace: string; readonly name: string; readonly field: ClaimField; readonly pick: number }
  | { readonly kind: 'kill'; readonly victim: Victim }
  | { readonly kind: 'restartApiserver' };

export const isFault = (op: Operation) => op.kind === 'kill' || op.kind === 'restartApiserver';

export function describeOperation(op: Operation): string {
  switch (op.kind) {
    case 'createClaim':
      return `create claim ${op.namespace}/${op.name} (${op.className}, ${op.family})`;
    case 'deleteClaim':
      return `delete claim ${op.namespace}/${op.name}`;
    case 'createService':
      return `create Service ${op.namespace}/${op.name} (LoadBalancer, ${op.stack}${op.claim ? `, claim ${op.claim}` : ', no claim'}${op.wrongFamily ? ', wrong family' : ''})`;
    case 'deleteService':
      return `delete Service ${op.namespace}/${op.name}`;
    case 'annotate':
      return `annotate Service ${op.namespace}/${op.name} with claim ${op.claim}`;
    case 'unannotate':
      return `remove the claim annotation of Service ${op.namespace}/${op.name}`;
    case 'setType':
      return `make Service ${op.namespace}/${op.name} ${op.type}`;
    case 'adminPin':
      return `admin pins Service ${op.name} to recorded address #${op.pick}`;
    case 'adminUnpin':
      return `admin deletes Service ${op.name}`;
    case 'adminDeleteReleased':
      return `admin deletes Released address #${op.pick}`;
    case 'createBadClass':
      return `admin creates class ${op.name} whose ranges overlap (${badClassAddresses(op.name, op.shape, op.pick).join(', ')})`;
    case 'deleteBadClass':
      return `admin deletes class ${op.name}`;
    case 'duplicateAddress':
      return `admin creates IPAddress ${op.name}, a duplicate of recorded address #${op.pick}${op.mapped ? ' (an IPv4 one spelled ::ffff:a.b.c.d)' : ''}`;
    case 'editClaim':
      return `admin edits spec.${op.field} of claim ${op.namespace}/${op.name} (must be refused)`;
    case 'kill':
      return `kill -9 the ${op.victim}, then start it again`;
    case 'restartApiserver':
      return 'restart kube-apiserver';
  }
}

/** What the history has asked for so far: the generator's only memory. */
export class Model {
  readonly claims = new Map<string, { family: ClaimFamily }>();
  readonly services = new Map<string, { claim?: string; type: 'LoadBalancer' | 'ClusterIP' }>();
  readonly adminPins = new Set<string>();
  readonly badClasses = new Set<string>();
  private pins = 0;
  private twins = 0;

  nextPinName(): string {
    return `pin-${++this.pins}`;
  }

  /**
   * `twin-<n>`: after `ip-…` in name order, so a duplicate made in the same second as the address it
   * copies is still the later one (creationTimestamp, then name) and never takes a bound IP's place.
   */
  nextTwinName(): string {
    return `twin-${++this.twins}`;
  }

  apply(op: Operation): void {
    switch (op.kind) {
      case 'createClaim':
        this.claims.set(key(op.namespace, op.name), { family: op.family });
        break;
      case 'deleteClaim':
        this.claims.delete(key(op.namespace, op.name));
        break;
      case 'createService':
        this.services.set(key(op.namespace, op.name), { claim: op.claim, type: 'LoadBalancer' });
        break;
      case 'deleteService':
        this.services.delete(key(op.namespace, op.name));
        break;
      case 'annotate':
      case 'unannotate':
      case 'setType': {
        const service = this.services.get(key(op.namespace, op.name));
        if (service) {
          if (op.kind === 'annotate') {
            service.claim = op.claim;
          } else if (op.kind === 'unannotate') {
            delete service.claim;
          } else {
            service.type = op.type;
          }
        }
        break;
      }
      case 'adminPin':
        this.adminPins.add(op.name);
        break;
      case 'adminUnpin':
        this.adminPins.delete(op.name);
        break;
      case 'createBadClass':
        this.badClasses.add(op.name);
        break;
      case 'deleteBadClass':
        this.badClasses.delete(op.name);
        break;
      default:
        break; // faults, recycling, duplicates and refused edits change nothing the generator draws from
    }
  }
}

export const key = (namespace: string, name: string) => `${namespace}/${name}`;
const split = (k: string) => k.split('/') as [string, string];

/**
 * How likely each operation is (relative weights); the faults are rare on purpose. Creating is
 * nearly off while every name of its pool is held (it would only be refused). The admin's mistakes
 * are weighted among themselves only (`nextMistake`).
 */
export const WEIGHTS = {
  createClaim: 14,
  deleteClaim: 9,
  createService: 12,
  wrongFamilyService: 4,
  deleteService: 7,
  annotate: 9,
  annotateMissing: 2,
  unannotate: 4,
  setType: 5,
  adminPin: 2,
  adminUnpin: 3,
  adminDeleteReleased: 3,
  killDriver: 1.5,
  killCore: 1.5,
  restartApiserver: 0.5,
  createBadClass: 1,
  deleteBadClass: 1,
  duplicateAddress: 1.5,
  editClaim: 2,
  /** Creating while no name of the pool is free. */
  createWhenFull: 0.5,
} as const;

export interface GeneratorOptions {
  /** Draw kill -9 and apiserver restarts. */
  readonly faults: boolean;
}

/**
 * Mostly a name the history does not hold in that namespace right now (so deleted names come
 * back), sometimes any: creating what exists is answered 409, which the history records.
 */
function freshName(rng: Rng, held: ReadonlyMap<string, unknown>, namespace: string, pool: readonly string[]): string {
  const free = pool.filter((name) => !held.has(key(namespace, name)));
  return free.length > 0 && rng.chance(0.9) ? rng.pick(free) : rng.pick(pool);
}

/** Mostly a claim the history holds in the namespace (so Services get addresses), sometimes any name of the pool. */
function someClaim(rng: Rng, model: Model, namespace: string, not?: string): string {
  const held = CLAIM_NAMES.filter((c) => c !== not && model.claims.has(key(namespace, c)));
  return held.length > 0 && rng.chance(0.75) ? rng.pick(held) : rng.pick(CLAIM_NAMES.filter((c) => c !== not));
}

const stackFor = (family: ClaimFamily | undefined): Stack => (family === 'IPv6' ? 'v6' : family === 'Dual' ? 'dual' : 'v4');

/** A stack that cannot carry the family: SingleStack IPv4 for IPv6 (or Dual), PreferDualStack for IPv4. */
const wrongStackFor = (family: ClaimFamily): Stack => (family === 'IPv4' ? 'prefer-dual' : 'v4');

/** Draws the next operation and notes it in the model. */
export function nextOperation(rng: Rng, model: Model, options: GeneratorOptions): Operation {
  const op = draw(rng, model, options);
  model.apply(op);
  return op;
}

function draw(rng: Rng, model: Model, options: GeneratorOptions): Operation {
  const claims = [...model.claims.keys()];
  const services = [...model.services.keys()];
  const annotated = services.filter((s) => model.services.get(s)!.claim !== undefined);
  const w = WEIGHTS;
  const claimSlots = TENANTS.length * CLAIM_NAMES.length;
  const serviceSlots = TENANTS.length * SERVICE_NAMES.length;
  const kind = rng.weighted([
    ['createClaim', claims.length < claimSlots ? w.createClaim : w.createWhenFull],
    ['deleteClaim', claims.length ? w.deleteClaim : 0],
    ['createService', services.length < serviceSlots ? w.createService : w.createWhenFull],
    ['wrongFamilyService', claims.length ? w.wrongFamilyService : 0],
    ['deleteService', services.length ? w.deleteService : 0],
    ['annotate', services.length ? w.annotate : 0],
    ['annotateMissing', services.length ? w.annotateMissing : 0],
    ['unannotate', annotated.length ? w.unannotate : 0],
    ['setType', services.length ? w.setType : 0],
    ['adminPin', w.adminPin],
    ['adminUnpin', model.adminPins.size ? w.adminUnpin : 0],
    ['adminDeleteReleased', w.adminDeleteReleased],
    ['killDriver', options.faults ? w.killDriver : 0],
    ['killCore', options.faults ? w.killCore : 0],
    ['restartApiserver', options.faults ? w.restartApiserver : 0],
  ] as const);
  switch (kind) {
    case 'createClaim': {
      const ipClass = rng.pick(CLASSES);
      const namespace = rng.pick(TENANTS);
      return { kind: 'createClaim', namespace, name: freshName(rng, model.claims, namespace, CLAIM_NAMES), className: ipClass.name, family: rng.pick(ipClass.families) };
    }
    case 'deleteClaim': {
      const [namespace, name] = split(rng.pick(claims));
      return { kind: 'deleteClaim', namespace, name };
    }
    case 'createService': {
      const namespace = rng.pick(TENANTS);
      const name = freshName(rng, model.services, namespace, SERVICE_NAMES);
      if (rng.chance(0.15)) {
        return { kind: 'createService', namespace, name, stack: rng.pick(['v4', 'v6', 'dual'] as const), wrongFamily: false };
      }
      const claim = someClaim(rng, model, namespace);
      return { kind: 'createService', namespace, name, claim, stack: stackFor(model.claims.get(key(namespace, claim))?.family), wrongFamily: false };
    }
    case 'wrongFamilyService': {
      const [namespace, claim] = split(rng.pick(claims));
      const stack = wrongStackFor(model.claims.get(key(namespace, claim))!.family);
      return { kind: 'createService', namespace, name: freshName(rng, model.services, namespace, SERVICE_NAMES), claim, stack, wrongFamily: true };
    }
    case 'deleteService': {
      const [namespace, name] = split(rng.pick(services));
      return { kind: 'deleteService', namespace, name };
    }
    case 'annotate':
    case 'annotateMissing': {
      const [namespace, name] = split(rng.pick(services));
      const current = model.services.get(key(namespace, name))!.claim;
      return { kind: 'annotate', namespace, name, claim: kind === 'annotateMissing' ? MISSING_CLAIM : someClaim(rng, model, namespace, current) };
    }
    case 'unannotate': {
      const [namespace, name] = split(rng.pick(annotated));
      return { kind: 'unannotate', namespace, name };
    }
    case 'setType': {
      const [namespace, name] = split(rng.pick(services));
      const type = model.services.get(key(namespace, name))!.type === 'LoadBalancer' ? 'ClusterIP' : 'LoadBalancer';
      return { kind: 'setType', namespace, name, type };
    }
    case 'adminPin':
      return { kind: 'adminPin', name: model.nextPinName(), pick: rng.int(1 << 16) };
    case 'adminUnpin':
      return { kind: 'adminUnpin', name: rng.pick([...model.adminPins].sort()) };
    case 'adminDeleteReleased':
      return { kind: 'adminDeleteReleased', pick: rng.int(1 << 16) };
    case 'killDriver':
      return { kind: 'kill', victim: 'driver' };
    case 'killCore':
      return { kind: 'kill', victim: 'core' };
    case 'restartApiserver':
      return { kind: 'restartApiserver' };
  }
}

/** How often an admin's mistake follows a tenant's operation (about one in fourteen). */
export const MISTAKE_CHANCE = 0.07;

/**
 * An admin's mistake to make after the operation just drawn, or none: drawn
 * from a PRNG of its own (the runner's), so a seed's tenant operations are the
 * very ones they were before mistakes were added, and only the mistakes come
 * between them. Notes it in the model (which the tenants' draws never read).
 */
export function nextMistake(rng: Rng, model: Model): Operation | undefined {
  if (!rng.chance(MISTAKE_CHANCE)) {
    return undefined;
  }
  const w = WEIGHTS;
  const claims = [...model.claims.keys()].sort();
  const kind = rng.weighted([
    ['createBadClass', model.badClasses.size < BAD_CLASS_NAMES.length ? w.createBadClass : 0],
    ['deleteBadClass', model.badClasses.size ? w.deleteBadClass : 0],
    ['duplicateAddress', w.duplicateAddress],
    ['editClaim', claims.length ? w.editClaim : 0],
  ] as const);
  let op: Operation;
  switch (kind) {
    case 'createBadClass':
      op = { kind: 'createBadClass', name: rng.pick(BAD_CLASS_NAMES.filter((n) => !model.badClasses.has(n))), shape: rng.pick(BAD_CLASS_SHAPES), pick: rng.int(1 << 16) };
      break;
    case 'deleteBadClass':
      op = { kind: 'deleteBadClass', name: rng.pick([...model.badClasses].sort()) };
      break;
    case 'duplicateAddress':
      op = { kind: 'duplicateAddress', name: model.nextTwinName(), pick: rng.int(1 << 16), mapped: rng.chance(0.5) };
      break;
    case 'editClaim': {
      const [namespace, name] = split(rng.pick(claims));
      op = { kind: 'editClaim', namespace, name, field: rng.pick(CLAIM_FIELDS), pick: rng.int(1 << 16) };
      break;
    }
  }
  model.apply(op);
  return op;
}
