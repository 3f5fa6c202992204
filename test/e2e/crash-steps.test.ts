/**
 * kill -9 at each step of the reservation, the binding and the handoff, not at
 * a moment chosen by a timer. The controller is held exactly at a step by an
 * admission fence: a ValidatingAdmissionPolicy that denies, for that
 * controller's identity only, the one write that would begin the next step
 * (MetalLB's assignment is held by pausing its process). Once the controller
 * has hit the fence it is killed, the fence lifted and a new process started;
 * the claim must then settle with every address accounted for: none lost, none
 * allocated twice, no placeholder left holding an IP for nothing.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControllerProcess } from './support/controller-process.js';
import { waitFor } from './support/ports.js';
import {
  CORE_SA,
  createClaim,
  createClass,
  crd,
  DRIVER_SA,
  expectAccounted,
  holdsOf,
  PLACEHOLDERS,
  startPlatform,
  type Cr,
  type Platform,
} from './support/platform.js';
import { recordFault, recordScenario } from './support/summary.js';

const NAMESPACE = 'tenant-a';
const PIN = 'metallb.io/loadBalancerIPs';

type Victim = 'core' | 'driver';

/** The write a fence denies: one resource and operation, for the victim only, where `when` holds. */
interface Fence {
  readonly apiGroup: string;
  readonly resource: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE';
  /** CEL over the admission request; `request.namespace` works for DELETE, where `object` is null. */
  readonly when?: string;
}

let platform: Platform;
const running: Record<Victim, ControllerProcess | undefined> = { core: undefined, driver: undefined };
let generation = 0;
let fences = 0;

async function startVictim(victim: Victim): Promise<void> {
  const instance = `${victim === 'core' ? 'address-controller' : 'metallb-iad'}-step-${++generation}`;
  running[victim] = await (victim === 'core' ? platform.startCore(instance) : platform.startDriver(instance));
}

async function kill(victim: Victim): Promise<void> {
  const child = running[victim]!.process.process;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** Installs a deny-only policy for the victim's identity; returns what lifts it. */
async function installFence(step: string, victim: Victim, fence: Fence): Promise<() => Promise<void>> {
  const name = `e2e-hold-${++fences}`;
  const user = victim === 'core' ? CORE_SA : DRIVER_SA;
  const [group, version] = fence.apiGroup === '' ? ['', 'v1'] : [fence.apiGroup, '*'];
  const policy: k8s.V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [group], apiVersions: [version], operations: [fence.operation], resources: [fence.resource] }] },
      matchConditions: [
        { name: 'victim', expression: `request.userInfo.username == ${JSON.stringify(user)}` },
        ...(fence.when ? [{ name: 'when', expression: fence.when }] : []),
      ],
      validations: [{ expression: 'false', message: `e2e: held at ${step}` }],
    },
  };
  const binding: k8s.V1ValidatingAdmissionPolicyBinding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
  await platform.admin.objects.create(policy);
  await platform.admin.objects.create(binding);
  // The apiserver loads policies through an informer: give it a moment before the work starts.
  await new Promise((r) => setTimeout(r, 2000));
  return async () => {
    await platform.admin.objects.delete(binding);
    await platform.admin.objects.delete(policy);
    await new Promise((r) => setTimeout(r, 2000));
  };
}

/**
 * One step: a claim (and, for the handoff, a Service naming it) is started
 * while the victim is held; `reached` is the state it stops in.
 */
interface Step {
  readonly name: string;
  readonly victim: Victim;
  /** The write denied to the victim; absent for the one step held by pausing MetalLB instead. */
  readonly fence?: Fence;
  /** The Service the handoff steps create once the claim is Bound. */
  readonly service?: boolean;
  readonly reached: (claim: string) => Promise<boolean>;
  /** Checked after the restart, once settled. */
  readonly then?: (claim: string) => Promise<void>;
}

const getClaim = async (name: string) => (await platform.admin.custom.getNamespacedCustomObject({ ...crd('ipaddressclaims'), namespace: NAMESPACE, name })) as Cr;
const claimBound = async (name: string) => (await getClaim(name)).status?.phase === 'Bound';
const allocationPlaceholder = async (claim: string) => {
  const uid = (await getClaim(claim)).metadata.uid!;
  return platform.admin.core.readNamespacedService({ name: `iad-${uid}-v4`, namespace: PLACEHOLDERS });
};
const addressOf = async (claim: string) => {
  const list = (await platform.admin.custom.listClusterCustomObject(crd('ipaddresses'))) as { items: Cr[] };
  return list.items.find((a) => a.spec.claimRef?.namespace === NAMESPACE && a.spec.claimRef?.name === claim);
};
const holdsOfClaim = async (claim: string) => holdsOf(platform.admin, (await addressOf(claim))!.metadata.name!);
const serviceName = (claim: string) => `svc-${claim}`;
const serviceCarries = async (claim: string) => {
  const ip = (await getClaim(claim)).status?.addresses?.[0]?.address;
  const svc = await platform.admin.core.readNamespacedService({ name: serviceName(claim), namespace: NAMESPACE });
  return Boolean(ip) && (svc.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip);
};

/** Holds the victim at the step, kills it there, lets go, restarts it, and audits the ledger. */
async function crashAt(step: Step, claim: string): Promise<void> {
  const letGo = step.fence ? await installFence(step.name, step.victim, step.fence) : pauseMetallb();
  try {
    await createClaim(platform.admin, claim);
    if (step.service) {
      await waitFor(`${claim} Bound`, () => claimBound(claim), 60_000);
      await platform.admin.core.createNamespacedService({
        namespace: NAMESPACE,
        body: { metadata: { name: serviceName(claim), annotations: { 'local.sdn.cozystack.io/ip-address-claim': claim } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
      });
    }
    await waitFor(`${step.victim} reaches: ${step.name}`, () => step.reached(claim), 60_000);
    if (step.fence) {
      const log = running[step.victim]!.process;
      await waitFor(`${step.victim} denied at: ${step.name}`, async () => log.tail(400).includes(`e2e: held at ${step.name}`), 60_000);
    }
    await kill(step.victim);
    recordFault(`kill -9 ${step.victim} at: ${step.name}`);
  } finally {
    await letGo();
  }
  await startVictim(step.victim);
  await waitFor(`settled after: ${step.name}`, () => (step.service ? serviceCarries(claim) : claimBound(claim)), 90_000);
  await expectAccounted(platform.admin);
  await step.then?.(claim);
  recordScenario(`restart after kill -9 at: ${step.name}`);
}

function pauseMetallb(): () => Promise<void> {
  platform.metallb.process.kill('SIGSTOP');
  return async () => {
    platform.metallb.process.kill('SIGCONT');
  };
}

const RESERVATION: Step[] = [
  {
    name: 'placeholder created, MetalLB has not assigned yet',
    victim: 'driver',
    reached: async (claim) => (await allocationPlaceholder(claim)).metadata?.name !== undefined,
  },
  {
    name: 'MetalLB assigned, the IPAddress not yet created',
    victim: 'driver',
    fence: { apiGroup: 'local.sdn.cozystack.io', resource: 'ipaddresses', operation: 'CREATE' },
    reached: async (claim) => ((await allocationPlaceholder(claim)).status?.loadBalancer?.ingress ?? []).length > 0,
  },
  {
    name: 'IPAddress created, the placeholder not yet linked, pinned and handed to it',
    victim: 'driver',
    fence: { apiGroup: '', resource: 'services', operation: 'UPDATE', when: `request.namespace == "${PLACEHOLDERS}"` },
    reached: async (claim) => (await addressOf(claim)) !== undefined,
    then: async (claim) => {
      const address = (await addressOf(claim))!.metadata.name;
      const holds = await holdsOfClaim(claim);
      expect(holds.map((h) => h.metadata?.ownerReferences?.map((o) => o.name))).toEqual([[address]]);
      expect(holds.map((h) => h.metadata?.annotations?.[PIN])).toEqual([(await addressOf(claim))!.spec.address]);
    },
  },
];

const BINDING: Step[] = [
  {
    name: 'claim stamped with its provisioner, status not yet written',
    victim: 'core',
    fence: { apiGroup: 'local.sdn.cozystack.io', resource: 'ipaddressclaims/status', operation: 'UPDATE' },
    reached: async (claim) => Boolean((await getClaim(claim)).metadata.annotations?.['local.sdn.cozystack.io/provisioner']),
  },
  {
    name: 'IPAddress recorded for the claim, the claim not yet Bound',
    victim: 'core',
    fence: {
      apiGroup: 'local.sdn.cozystack.io',
      resource: 'ipaddressclaims/status',
      operation: 'UPDATE',
      when: 'has(object.status) && has(object.status.phase) && object.status.phase == "Bound"',
    },
    reached: async (claim) => (await addressOf(claim)) !== undefined,
  },
];

const noHolds = async (claim: string) => {
  expect(await holdsOfClaim(claim)).toEqual([]);
};

const HANDOFF: Step[] = [
  {
    name: 'association recorded, the Service not yet pinned',
    victim: 'driver',
    service: true,
    fence: { apiGroup: '', resource: 'services', operation: 'UPDATE', when: `request.namespace == "${NAMESPACE}"` },
    reached: async (claim) => (await addressOf(claim))?.status?.associatedTo?.name === serviceName(claim),
    then: noHolds,
  },
  {
    // The Service already asks MetalLB for the IP while the hold still has it: no gap in which
    // the IP is free.
    name: 'Service pinned, the hold not yet released',
    victim: 'driver',
    service: true,
    fence: { apiGroup: '', resource: 'services', operation: 'DELETE', when: `request.namespace == "${PLACEHOLDERS}"` },
    reached: async (claim) => {
      const svc = await platform.admin.core.readNamespacedService({ name: serviceName(claim), namespace: NAMESPACE });
      return Boolean(svc.metadata?.annotations?.[PIN]) && (await holdsOfClaim(claim)).length === 1;
    },
    then: noHolds,
  },
];

beforeAll(async () => {
  platform = await startPlatform();
  await createClass(platform.admin, 'public', ['203.0.113.0/26']);
  await startVictim('core');
  await startVictim('driver');
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

let claims = 0;
for (const [title, steps] of [
  ['the reservation (driver, docs/driver.md)', RESERVATION],
  ['the binding (core, docs/binding.md)', BINDING],
  ['the handoff (driver, docs/driver.md)', HANDOFF],
] as const) {
  describe(`kill -9 at each step of ${title}`, () => {
    for (const step of steps) {
      it(step.name, () => crashAt(step, `step-${++claims}`));
    }
  });
}
