/**
 * The operations of a history and the generator that draws them. The draw
 * depends only on the PRNG and on what the history itself has asked for (the
 * model), never on what the cluster answered: one seed is one sequence of
 * operations on every run. What the cluster makes of them is what is tested.
 */
import type { Rng } from './prng.js';
import {
  BAD_CLASS_NAMES,
  BAD_CLASS_SHAPES,
  badClassAddresses,
  CLAIM_NAMES,
  CLASSES,
  LB_CLASSES,
  MISSING_CLAIM,
  SERVICE_NAMES,
  TENANTS,
  type BadClassShape,
  type ClaimFamily,
} from './world.js';

/**
 * How a Service asks for ClusterIP families: v4/v6 SingleStack; dual RequireDualStack (IPv4
 * first), dual-v6 RequireDualStack (IPv6 first: what a v6 Service becomes when made dual-stack),
 * prefer-dual PreferDualStack (dual on this dual-stack cluster).
 */
export type Stack = 'v4' | 'v6' | 'dual' | 'dual-v6' | 'prefer-dual';
/** A claim's spec.sharing: Exclusive (also when absent) or Shared. */
export type Sharing = 'Exclusive' | 'Shared';
/** The TCP ports a tenant Service serves (one each): a Shared claim's Services then overlap or not. */
export const PORTS = [80, 443, 8080] as const;
export type Port = (typeof PORTS)[number];
/** A tenant Service as the history asked for it last: what a re-apply or a replace writes again. */
export interface ServiceShape {
  readonly claim?: string;
  readonly type: 'LoadBalancer' | 'ClusterIP';
  readonly stack: Stack;
  /** spec.loadBalancerClass (only on a LoadBalancer). */
  readonly lbClass?: string;
  /** Its one TCP port. */
  readonly port: Port;
}
/** How a Service is re-applied: server-side apply as helm-controller (forced), or a read-modify-write update that keeps what it does not name. */
export type Reapply = 'apply' | 'update';
export type Victim = 'core' | 'driver';
/** The fields of a claim's spec that are immutable once set (the PersistentVolumeClaim rules). */
export type ClaimField = 'className' | 'family' | 'addressName';
export const CLAIM_FIELDS: readonly ClaimField[] = ['className', 'family', 'addressName'];

export type Operation =
  /** `sharing` Exclusive leaves spec.sharing unset (its default); Shared writes it. */
  | { readonly kind: 'createClaim'; readonly namespace: string; readonly name: string; readonly className: string; readonly family: ClaimFamily; readonly sharing: Sharing }
  | { readonly kind: 'deleteClaim'; readonly namespace: string; readonly name: string }
  /** spec.sharing written (a merge patch): it may change at any time. */
  | { readonly kind: 'setSharing'; readonly namespace: string; readonly name: string; readonly sharing: Sharing }
  /**
   * `wrongFamily`: the stack deliberately cannot carry the claim's family. `variant` says why it was
   * drawn (for the report's mix): a second Service naming a claim another Service names, one naming
   * a Shared claim, a Dual claim on a single-stack Service, a loadBalancerClass other than the
   * claim's class's.
   */
  | {
      readonly kind: 'createService';
      readonly namespace: string;
      readonly name: string;
      readonly claim?: string;
      readonly stack: Stack;
      readonly wrongFamily: boolean;
      readonly lbClass?: string;
      readonly port: Port;
      readonly variant?: 'twin' | 'shared' | 'dual-on-single' | 'lb-mismatch';
    }
  /** The Service's manifest (the history's shape of it) written again, keeping the driver's keys. */
  | { readonly kind: 'reapply'; readonly namespace: string; readonly name: string; readonly how: Reapply; readonly shape: ServiceShape }
  /** The Service replaced (PUT) by its manifest, which has none of the driver's keys (pin, marker, carrier label). */
  | { readonly kind: 'replace'; readonly namespace: string; readonly name: string; readonly shape: ServiceShape }
  /** ipFamilyPolicy/ipFamilies changed: single-stack made dual-stack (keeping its first family), or back. */
  | { readonly kind: 'setStack'; readonly namespace: string; readonly name: string; readonly from: Stack; readonly stack: Stack }
  /** spec.ports made the one port `port` (a merge patch replaces the list): onto a fellow carrier's, or off it. */
  | { readonly kind: 'setPort'; readonly namespace: string; readonly name: string; readonly from: Port; readonly port: Port }
  /**
   * spec.loadBalancerClass is immutable: the Service deleted and made again under its name with `shape` (another class).
   * Variant `shared`: a newcomer naming a Shared claim takes the name of another Service, every name of the namespace being held.
   */
  | { readonly kind: 'recreateService'; readonly namespace: string; readonly name: string; readonly shape: ServiceShape; readonly variant?: 'shared' }
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
  /** The admin switches a class of the world between L2 and BGP (its pool, and every address in it, stay). */
  | { readonly kind: 'announce'; readonly className: string; readonly by: 'L2' | 'BGP' }
  | { readonly kind: 'kill'; readonly victim: Victim }
  | { readonly kind: 'restartApiserver' };

export const isFault = (op: Operation) => op.kind === 'kill' || op.kind === 'restartApiserver';

const describeShape = (shape: ServiceShape) =>
  `${shape.type}, ${shape.stack}, port ${shape.port}${shape.lbClass ? `, class ${shape.lbClass}` : ''}${shape.claim ? `, claim ${shape.claim}` : ', no claim'}`;

/** What the report's mix counts an operation under: its kind, for a Service's creation why it was drawn, a Shared claim's creation apart. */
export function tallyKey(op: Operation): string {
  if (op.kind === 'createService' && op.variant) {
    return `createService:${op.variant}`;
  }
  if (op.kind === 'createClaim' && op.sharing === 'Shared') {
    return 'createClaim:shared';
  }
  if (op.kind === 'recreateService' && op.variant) {
    return `recreateService:${op.variant}`;
  }
  return op.kind === 'reapply' ? `reapply:${op.how}` : op.kind;
}

export function describeOperation(op: Operation): string {
  switch (op.kind) {
    case 'createClaim':
      return `create claim ${op.namespace}/${op.name} (${op.className}, ${op.family}${op.sharing === 'Shared' ? ', Shared' : ''})`;
    case 'deleteClaim':
      return `delete claim ${op.namespace}/${op.name}`;
    case 'setSharing':
      return `make claim ${op.namespace}/${op.name} ${op.sharing}`;
    case 'createService':
      return (
        `create Service ${op.namespace}/${op.name} (LoadBalancer, ${op.stack}, port ${op.port}${op.lbClass ? `, class ${op.lbClass}` : ''}` +
        `${op.claim ? `, claim ${op.claim}` : ', no claim'}${op.wrongFamily ? ', wrong family' : ''}${op.variant ? `, ${op.variant}` : ''})`
      );
    case 'reapply':
      return `re-apply Service ${op.namespace}/${op.name} (${op.how === 'apply' ? 'server-side apply as helm-controller, forced' : 'read-modify-write update'}; ${describeShape(op.shape)})`;
    case 'replace':
      return `replace Service ${op.namespace}/${op.name} by its manifest, without the driver's keys (${describeShape(op.shape)})`;
    case 'setStack':
      return `make Service ${op.namespace}/${op.name} ${op.stack} (was ${op.from})`;
    case 'setPort':
      return `make Service ${op.namespace}/${op.name} serve port ${op.port} (was ${op.from})`;
    case 'recreateService':
      return `delete Service ${op.namespace}/${op.name} and create it again (${describeShape(op.shape)}${op.variant ? `, ${op.variant}` : ''})`;
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
    case 'announce':
      return `admin announces class ${op.className} by ${op.by}`;
    case 'kill':
      return `kill -9 the ${op.victim}, then start it again`;
    case 'restartApiserver':
      return 'restart kube-apiserver';
  }
}

/** What the history has asked for so far: the generator's only memory. */
export class Model {
  readonly claims = new Map<string, { family: ClaimFamily; className: string; sharing: Sharing }>();
  readonly services = new Map<string, { claim?: string; type: 'LoadBalancer' | 'ClusterIP'; stack: Stack; lbClass?: string; port: Port }>();
  readonly adminPins = new Set<string>();
  readonly badClasses = new Set<string>();
  /** How each class of the world is announced (L2 unless the history switched it). */
  readonly announced = new Map<string, 'L2' | 'BGP'>();
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
        // A claim the history holds already is answered 409 and keeps its class and family.
        if (!this.claims.has(key(op.namespace, op.name))) {
          this.claims.set(key(op.namespace, op.name), { family: op.family, className: op.className, sharing: op.sharing });
        }
        break;
      case 'deleteClaim':
        this.claims.delete(key(op.namespace, op.name));
        break;
      case 'setSharing': {
        const claim = this.claims.get(key(op.namespace, op.name));
        if (claim) {
          claim.sharing = op.sharing;
        }
        break;
      }
      case 'createService':
        // A name the history holds already is answered 409: the Service stays as it was (its shape is what a replace writes).
        if (!this.services.has(key(op.namespace, op.name))) {
          this.services.set(key(op.namespace, op.name), { claim: op.claim, type: 'LoadBalancer', stack: op.stack, port: op.port, ...(op.lbClass ? { lbClass: op.lbClass } : {}) });
        }
        break;
      case 'recreateService':
        this.services.set(key(op.namespace, op.name), { ...op.shape });
        break;
      case 'setStack': {
        const service = this.services.get(key(op.namespace, op.name));
        if (service) {
          service.stack = op.stack;
        }
        break;
      }
      case 'setPort': {
        const service = this.services.get(key(op.namespace, op.name));
        if (service) {
          service.port = op.port;
        }
        break;
      }
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
            if (op.type !== 'LoadBalancer') {
              delete service.lbClass; // the apiserver drops it with the type (it is only a LoadBalancer's)
            }
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
      case 'announce':
        this.announced.set(op.className, op.by);
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
  /** The same manifest again (server-side apply as helm-controller, or an update keeping the rest). */
  reapply: 5,
  /** A PUT of the manifest, which drops the driver's keys. */
  replace: 4,
  /** Single-stack made dual-stack or back (mostly Services naming a Dual claim). */
  setStack: 3,
  /** Deleted and made again with another spec.loadBalancerClass (immutable). */
  recreateService: 2,
  /** A second Service naming a claim another Service names already. */
  twinService: 3,
  /** A class switched between L2 and BGP. */
  announce: 1.5,
  /**
   * A new Service naming a Shared claim (mostly one a Service that may carry it names already),
   * made in another's place when every name is held: twins alone seldom share an IP at a checkpoint.
   */
  sharedService: 5,
  /** A claim made Shared or Exclusive (mostly one two Services name). */
  setSharing: 3,
  /** A Service's port changed (mostly one naming a Shared claim). */
  setPort: 1.5,
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

/**
 * A stack for a Service naming a claim of this family: its own, except that a Dual claim gets a
 * single-stack Service (IPv4 or IPv6) nearly half the time, which carries only that family's address.
 */
function stackFor(rng: Rng, family: ClaimFamily | undefined): Stack {
  if (family === 'Dual') {
    return rng.weighted([['dual', 4], ['prefer-dual', 1], ['v4', 2.5], ['v6', 2.5]] as const);
  }
  return family === 'IPv6' ? 'v6' : 'v4';
}

/**
 * A stack that cannot carry the family: SingleStack IPv4 for IPv6, PreferDualStack (dual on this
 * dual-stack cluster) for IPv4. A Dual claim has none: every stack carries one of its families.
 */
const wrongStackFor = (family: ClaimFamily): Stack | undefined => (family === 'IPv4' ? 'prefer-dual' : family === 'IPv6' ? 'v4' : undefined);

/** The loadBalancerClass of a claim's class (undefined: none, or no such claim in the model). */
function lbClassOf(model: Model, namespace: string, claim: string | undefined): string | undefined {
  const className = claim ? model.claims.get(key(namespace, claim))?.className : undefined;
  return CLASSES.find((c) => c.name === className)?.loadBalancerClass;
}

/** Mostly the class the claim's class asks for; one time in ten another (refused: LoadBalancerClassMismatch). */
function lbClassFor(rng: Rng, model: Model, namespace: string, claim: string | undefined): { lbClass?: string; mismatch: boolean } {
  const wanted = lbClassOf(model, namespace, claim);
  if (rng.chance(0.1)) {
    const other = rng.pick(LB_CLASSES.filter((c) => c !== wanted));
    return { ...(other ? { lbClass: other } : {}), mismatch: claim !== undefined };
  }
  return { ...(wanted ? { lbClass: wanted } : {}), mismatch: false };
}

/** How a single- or dual-stack Service changes: single-stack to dual-stack keeping its family first, dual-stack back to its first family. */
const RESTACK: Record<Stack, Stack> = { v4: 'dual', v6: 'dual-v6', dual: 'v4', 'dual-v6': 'v6', 'prefer-dual': 'v4' };

/** A Service of the model, drawn mostly (share `p`) from those `prefer` picks when there are any. */
function someService(rng: Rng, model: Model, p: number, prefer: (s: { claim?: string; type: string; stack: Stack }, namespace: string) => boolean): [string, string] {
  const all = [...model.services.keys()];
  const preferred = all.filter((k) => prefer(model.services.get(k)!, split(k)[0]));
  return split(preferred.length > 0 && rng.chance(p) ? rng.pick(preferred) : rng.pick(all));
}

const shapeOf = (model: Model, namespace: string, name: string): ServiceShape => {
  const s = model.services.get(key(namespace, name))!;
  return { ...(s.claim !== undefined ? { claim: s.claim } : {}), type: s.type, stack: s.stack, ...(s.lbClass ? { lbClass: s.lbClass } : {}), port: s.port };
};

/** Mostly 80, as most Services serve; else 443 or 8080: two Services of a Shared claim clash about half the time. */
const portFor = (rng: Rng): Port => rng.weighted([[80, 6], [443, 2], [8080, 2]] as const);

/** The ports the model's Services naming this claim serve. */
const portsNaming = (model: Model, claimKey: string): Port[] =>
  [...model.services].filter(([k, s]) => s.claim !== undefined && key(split(k)[0], s.claim) === claimKey).map(([, s]) => s.port);

/** Whether a stack carries an address of the family: any for Dual (its family's), else exactly it. */
const stackCarries = (family: ClaimFamily, stack: Stack) => family === 'Dual' || stack === (family === 'IPv6' ? 'v6' : 'v4');

/** The ports of the model's Services that may carry this claim (LoadBalancer, its class's loadBalancerClass, a stack for its family). */
function carrierPorts(model: Model, claimKey: string): Port[] {
  const claim = model.claims.get(claimKey);
  const [namespace, name] = split(claimKey);
  const wanted = lbClassOf(model, namespace, name);
  return [...model.services]
    .filter(([k, s]) => s.claim !== undefined && key(split(k)[0], s.claim) === claimKey && s.type === 'LoadBalancer' && s.lbClass === wanted && claim !== undefined && stackCarries(claim.family, s.stack))
    .map(([, s]) => s.port);
}

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
  const shared = claims.filter((c) => model.claims.get(c)!.sharing === 'Shared');
  /**
   * Not a LoadBalancer of a loadBalancerClass: MetalLB v0.16.1 never lets go of the IP of such a
   * Service made ClusterIP. The apiserver drops spec.loadBalancerClass with the type, and the
   * MetalLB started with --lb-class then filters the Service out before its handler
   * (internal/k8s/controllers/service_controller.go, filterByLoadBalancerClass), so its allocator
   * keeps the IP for it until the Service is deleted: the claim's hold, and any later Service of
   * the claim, is refused the IP ("address also in use by"). A tenant changes such a Service's
   * type by deleting and recreating it (recreateService does).
   */
  const retypable = services.filter((s) => !(model.services.get(s)!.type === 'LoadBalancer' && model.services.get(s)!.lbClass));
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
    ['setType', retypable.length ? w.setType : 0],
    ['adminPin', w.adminPin],
    ['adminUnpin', model.adminPins.size ? w.adminUnpin : 0],
    ['adminDeleteReleased', w.adminDeleteReleased],
    ['killDriver', options.faults ? w.killDriver : 0],
    ['killCore', options.faults ? w.killCore : 0],
    ['restartApiserver', options.faults ? w.restartApiserver : 0],
    ['reapply', services.length ? w.reapply : 0],
    ['replace', services.length ? w.replace : 0],
    ['setStack', services.length ? w.setStack : 0],
    ['recreateService', services.length ? w.recreateService : 0],
    ['twinService', annotated.some((s) => model.claims.has(key(split(s)[0], model.services.get(s)!.claim!))) ? w.twinService : 0],
    ['announce', w.announce],
    ['sharedService', shared.length ? w.sharedService : 0],
    ['setSharing', claims.length ? w.setSharing : 0],
    ['setPort', services.length ? w.setPort : 0],
  ] as const);
  switch (kind) {
    case 'createClaim': {
      const ipClass = rng.pick(CLASSES);
      const namespace = rng.pick(TENANTS);
      // Dual twice as likely as either family where a class has both: Dual claims meet single-stack Services more often.
      const family = rng.weighted(ipClass.families.map((f) => [f, f === 'Dual' ? 2 : 1] as const));
      const name = freshName(rng, model.claims, namespace, CLAIM_NAMES);
      return { kind: 'createClaim', namespace, name, className: ipClass.name, family, sharing: rng.chance(1 / 3) ? 'Shared' : 'Exclusive' };
    }
    case 'deleteClaim': {
      const [namespace, name] = split(rng.pick(claims));
      return { kind: 'deleteClaim', namespace, name };
    }
    case 'setSharing': {
      // Mostly a claim two Services of the model name: the switch then lets one in, or sends it away.
      const crowded = claims.filter((c) => portsNaming(model, c).length > 1);
      const [namespace, name] = split(crowded.length > 0 && rng.chance(0.7) ? rng.pick(crowded) : rng.pick(claims));
      return { kind: 'setSharing', namespace, name, sharing: model.claims.get(key(namespace, name))!.sharing === 'Shared' ? 'Exclusive' : 'Shared' };
    }
    case 'sharedService': {
      // Mostly a Shared claim a Service that may carry it names already: the newcomer meets its port, or not.
      const named = shared.filter((c) => carrierPorts(model, c).length > 0);
      const claimKey = named.length > 0 && rng.chance(0.8) ? rng.pick(named) : rng.pick(shared);
      const [namespace, claim] = split(claimKey);
      // The stack and class the claim asks for: a refusal of another kind would hide the sharing (twins and annotations bring those).
      const stack = stackFor(rng, model.claims.get(claimKey)!.family);
      const lbClass = lbClassOf(model, namespace, claim);
      // Half the time a port none of them serves (it joins them), else the usual draw (often one in use: PortInUse).
      const free = PORTS.filter((p) => !carrierPorts(model, claimKey).includes(p));
      const port = free.length > 0 && rng.chance(0.5) ? rng.pick(free) : portFor(rng);
      // Every name of the namespace held (most of the time, the pool being small): another Service
      // becomes the newcomer, deleted and made again, rather than a 409 that shares nothing.
      const others = SERVICE_NAMES.filter((n) => model.services.get(key(namespace, n))?.claim !== claim);
      if (SERVICE_NAMES.every((n) => model.services.has(key(namespace, n))) && others.length > 0) {
        const shape: ServiceShape = { claim, type: 'LoadBalancer', stack, port, ...(lbClass ? { lbClass } : {}) };
        return { kind: 'recreateService', namespace, name: rng.pick(others), shape, variant: 'shared' };
      }
      const name = freshName(rng, model.services, namespace, SERVICE_NAMES);
      return { kind: 'createService', namespace, name, claim, stack, wrongFamily: false, port, variant: 'shared', ...(lbClass ? { lbClass } : {}) };
    }
    case 'setPort': {
      const [namespace, name] = someService(rng, model, 0.8, (s, ns) => s.claim !== undefined && model.claims.get(key(ns, s.claim))?.sharing === 'Shared');
      const from = model.services.get(key(namespace, name))!.port;
      return { kind: 'setPort', namespace, name, from, port: rng.pick(PORTS.filter((p) => p !== from)) };
    }
    case 'createService': {
      const namespace = rng.pick(TENANTS);
      const name = freshName(rng, model.services, namespace, SERVICE_NAMES);
      if (rng.chance(0.15)) {
        const { lbClass } = lbClassFor(rng, model, namespace, undefined);
        return { kind: 'createService', namespace, name, stack: rng.pick(['v4', 'v6', 'dual'] as const), wrongFamily: false, port: portFor(rng), ...(lbClass ? { lbClass } : {}) };
      }
      return serviceNaming(rng, model, namespace, name, someClaim(rng, model, namespace));
    }
    case 'announce': {
      const className = rng.pick(CLASSES).name;
      return { kind: 'announce', className, by: model.announced.get(className) === 'BGP' ? 'L2' : 'BGP' };
    }
    case 'twinService': {
      // A claim some Service of the model names already: the oldest admitted of the two carries it.
      const named = [...new Set(annotated.map((s) => key(split(s)[0], model.services.get(s)!.claim!)))].filter((c) => model.claims.has(c)).sort();
      const [namespace, claim] = split(rng.pick(named));
      return { ...serviceNaming(rng, model, namespace, freshName(rng, model.services, namespace, SERVICE_NAMES), claim), variant: 'twin' };
    }
    case 'wrongFamilyService': {
      const [namespace, claim] = split(rng.pick(claims));
      const name = freshName(rng, model.services, namespace, SERVICE_NAMES);
      const lbClass = lbClassOf(model, namespace, claim);
      const stack = wrongStackFor(model.claims.get(key(namespace, claim))!.family);
      if (!stack) {
        // A Dual claim: a single-stack Service of either family, which carries that family's address only.
        return { kind: 'createService', namespace, name, claim, stack: rng.pick(['v4', 'v6'] as const), wrongFamily: false, port: portFor(rng), variant: 'dual-on-single', ...(lbClass ? { lbClass } : {}) };
      }
      return { kind: 'createService', namespace, name, claim, stack, wrongFamily: true, port: portFor(rng), ...(lbClass ? { lbClass } : {}) };
    }
    case 'reapply': {
      const [namespace, name] = someService(rng, model, 0.8, (s) => s.claim !== undefined);
      return { kind: 'reapply', namespace, name, how: rng.chance(0.6) ? 'apply' : 'update', shape: shapeOf(model, namespace, name) };
    }
    case 'replace': {
      const [namespace, name] = someService(rng, model, 0.85, (s) => s.claim !== undefined && s.type === 'LoadBalancer');
      return { kind: 'replace', namespace, name, shape: shapeOf(model, namespace, name) };
    }
    case 'setStack': {
      const [namespace, name] = someService(rng, model, 0.7, (s, ns) => s.claim !== undefined && model.claims.get(key(ns, s.claim))?.family === 'Dual');
      const from = model.services.get(key(namespace, name))!.stack;
      return { kind: 'setStack', namespace, name, from, stack: RESTACK[from] };
    }
    case 'recreateService': {
      const [namespace, name] = someService(rng, model, 0.7, (s, ns) => s.claim !== undefined && model.claims.has(key(ns, s.claim)));
      const shape = shapeOf(model, namespace, name);
      const wanted = lbClassOf(model, namespace, shape.claim);
      // Half the time to the class the claim asks for when it has another; else any other class.
      const others = LB_CLASSES.filter((c) => c !== shape.lbClass);
      const lbClass = others.includes(wanted) && rng.chance(0.5) ? wanted : rng.pick(others);
      return { kind: 'recreateService', namespace, name, shape: { ...(shape.claim !== undefined ? { claim: shape.claim } : {}), type: 'LoadBalancer', stack: shape.stack, port: shape.port, ...(lbClass ? { lbClass } : {}) } };
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
      const [namespace, name] = split(rng.pick(retypable));
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

/** A new Service naming `claim`: a stack for the claim's family, the class its class asks for (mostly), a port. */
function serviceNaming(rng: Rng, model: Model, namespace: string, name: string, claim: string): Extract<Operation, { kind: 'createService' }> {
  const family = model.claims.get(key(namespace, claim))?.family;
  const stack = stackFor(rng, family);
  const { lbClass, mismatch } = lbClassFor(rng, model, namespace, claim);
  const variant = mismatch ? 'lb-mismatch' : family === 'Dual' && (stack === 'v4' || stack === 'v6') ? 'dual-on-single' : undefined;
  return { kind: 'createService', namespace, name, claim, stack, wrongFamily: false, port: portFor(rng), ...(lbClass ? { lbClass } : {}), ...(variant ? { variant } : {}) };
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
