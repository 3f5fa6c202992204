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
  auditLedger,
  CORE_SA,
  createClaim,
  createClass,
  crd,
  DRIVER_SA,
  PLACEHOLDERS,
  startPlatform,
  type Cr,
  type Platform,
} from './support/platform.js';
import { recordFault, recordScenario } from './support/summary.js';

const NAMESPACE = 'tenant-a';
const LINK_LABEL = 'metallb.drivers.local.sdn.cozystack.io/ip-address';
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

interface Step {
  readonly name: string;
  readonly victim: Victim;
  /** Holds the victim at the step; returns what lets it go. */
  readonly hold: () => Promise<() => Promise<void>>;
  /** Starts the work the victim is to be caught in. */
  readonly act: () => Promise<void>;
  /** The state the victim reaches and cannot leave while held. */
  readonly reached: () => Promise<boolean>;
  /** Whether the victim tried the fenced write (a paused MetalLB shows nothing in the victim's log). */
  readonly fenced: boolean;
  /** The end state after the restart. */
  readonly settled: () => Promise<boolean>;
}

/** Holds the victim at the step, kills it there, lets go, restarts it, and audits the ledger. */
async function crashAt(step: Step): Promise<void> {
  const letGo = await step.hold();
  try {
    await step.act();
    await waitFor(`${step.victim} reaches: ${step.name}`, step.reached, 60_000);
    if (step.fenced) {
      const log = running[step.victim]!.process;
      await waitFor(`${step.victim} denied at: ${step.name}`, async () => log.tail(400).includes(`e2e: held at ${step.name}`), 60_000);
    }
    await kill(step.victim);
    recordFault(`kill -9 ${step.victim} at: ${step.name}`);
  } finally {
    await letGo();
  }
  await startVictim(step.victim);
  await waitFor(`settled after: ${step.name}`, step.settled, 90_000);
  let audit = await auditLedger(platform.admin);
  await waitFor(`ledger settles (${audit.problems.join('; ')})`, async () => {
    audit = await auditLedger(platform.admin);
    return audit.problems.length === 0;
  }, 60_000);
  expect(audit.problems).toEqual([]);
  recordScenario(`restart after kill -9 at: ${step.name}`);
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
const holdsOf = async (addressName: string) =>
  (await platform.admin.core.listNamespacedService({ namespace: PLACEHOLDERS, labelSelector: `${LINK_LABEL}=${addressName}` })).items;
const serviceCarries = async (service: string, claim: string) => {
  const ip = (await getClaim(claim)).status?.addresses?.[0]?.address;
  const svc = await platform.admin.core.readNamespacedService({ name: service, namespace: NAMESPACE });
  return Boolean(ip) && (svc.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip);
};
const createService = (name: string, claim: string) =>
  platform.admin.core.createNamespacedService({
    namespace: NAMESPACE,
    body: { metadata: { name, annotations: { 'local.sdn.cozystack.io/ip-address-claim': claim } }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } },
  });
const fenced = (step: string, victim: Victim, fence: Fence) => () => installFence(step, victim, fence);
const claimStep = (name: string, victim: Victim, claim: string, hold: Step['hold'], reached: Step['reached'], isFenced = true): Step => ({
  name,
  victim,
  hold,
  act: async () => {
    await createClaim(platform.admin, claim);
  },
  reached,
  fenced: isFenced,
  settled: () => claimBound(claim),
});

beforeAll(async () => {
  platform = await startPlatform();
  await createClass(platform.admin, 'public', ['203.0.113.0/26']);
  await startVictim('core');
  await startVictim('driver');
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe('kill -9 at each step of the reservation (driver, metallb-iad.md §4)', () => {
  it('placeholder created, MetalLB has not assigned yet', async () => {
    const step = 'placeholder created, MetalLB has not assigned yet';
    await crashAt(
      claimStep(
        step,
        'driver',
        'step-r1',
        async () => {
          platform.metallb.process.kill('SIGSTOP');
          return async () => {
            platform.metallb.process.kill('SIGCONT');
          };
        },
        async () => (await allocationPlaceholder('step-r1')).metadata?.name !== undefined,
        false,
      ),
    );
  });

  it('MetalLB assigned, the placeholder not yet pinned', async () => {
    const step = 'MetalLB assigned, the placeholder not yet pinned';
    await crashAt(
      claimStep(
        step,
        'driver',
        'step-r2',
        fenced(step, 'driver', { apiGroup: '', resource: 'services', operation: 'UPDATE', when: `request.namespace == "${PLACEHOLDERS}"` }),
        async () => ((await allocationPlaceholder('step-r2')).status?.loadBalancer?.ingress ?? []).length > 0,
      ),
    );
  });

  it('placeholder pinned, the IPAddress not yet created', async () => {
    const step = 'placeholder pinned, the IPAddress not yet created';
    await crashAt(
      claimStep(
        step,
        'driver',
        'step-r3',
        fenced(step, 'driver', { apiGroup: 'local.sdn.cozystack.io', resource: 'ipaddresses', operation: 'CREATE' }),
        async () => Boolean((await allocationPlaceholder('step-r3')).metadata?.annotations?.[PIN]),
      ),
    );
  });

  it('IPAddress created, the placeholder not yet handed to it', async () => {
    const step = 'IPAddress created, the placeholder not yet handed to it';
    await crashAt(
      claimStep(
        step,
        'driver',
        'step-r4',
        fenced(step, 'driver', {
          apiGroup: '',
          resource: 'services',
          operation: 'UPDATE',
          when: `request.namespace == "${PLACEHOLDERS}" && has(object.metadata.ownerReferences)`,
        }),
        async () => (await addressOf('step-r4')) !== undefined,
      ),
    );
    const address = (await addressOf('step-r4'))!;
    const holds = await holdsOf(address.metadata.name!);
    expect(holds.map((h) => h.metadata?.ownerReferences?.map((o) => o.name))).toEqual([[address.metadata.name]]);
  });
});

describe('kill -9 at each step of the binding (core, address-controller-api.md §7)', () => {
  it('claim stamped with its provisioner, status not yet written', async () => {
    const step = 'claim stamped with its provisioner, status not yet written';
    await crashAt(
      claimStep(
        step,
        'core',
        'step-c1',
        fenced(step, 'core', { apiGroup: 'local.sdn.cozystack.io', resource: 'ipaddressclaims/status', operation: 'UPDATE' }),
        async () => Boolean((await getClaim('step-c1')).metadata.annotations?.['local.sdn.cozystack.io/provisioner']),
      ),
    );
  });

  it('IPAddress recorded for the claim, the claim not yet Bound', async () => {
    const step = 'IPAddress recorded for the claim, the claim not yet Bound';
    await crashAt(
      claimStep(
        step,
        'core',
        'step-c2',
        fenced(step, 'core', {
          apiGroup: 'local.sdn.cozystack.io',
          resource: 'ipaddressclaims/status',
          operation: 'UPDATE',
          when: 'has(object.status) && has(object.status.phase) && object.status.phase == "Bound"',
        }),
        async () => (await addressOf('step-c2')) !== undefined,
      ),
    );
  });
});

describe('kill -9 at each step of the handoff (driver, metallb-iad.md §7)', () => {
  const handoffStep = (name: string, claim: string, fence: Fence, reached: (address: Cr) => Promise<boolean>): (() => Promise<void>) => async () => {
    await createClaim(platform.admin, claim);
    await waitFor(`${claim} Bound`, () => claimBound(claim), 60_000);
    const address = (await addressOf(claim))!;
    await crashAt({
      name,
      victim: 'driver',
      hold: fenced(name, 'driver', fence),
      act: async () => {
        await createService(`svc-${claim}`, claim);
      },
      reached: () => reached(address),
      fenced: true,
      settled: () => serviceCarries(`svc-${claim}`, claim),
    });
    expect(await holdsOf(address.metadata.name!)).toEqual([]);
  };

  it(
    'association recorded, the hold not yet released',
    handoffStep(
      'association recorded, the hold not yet released',
      'step-h1',
      { apiGroup: '', resource: 'services', operation: 'DELETE', when: `request.namespace == "${PLACEHOLDERS}"` },
      async (address) => {
        const current = (await platform.admin.custom.getClusterCustomObject({ ...crd('ipaddresses'), name: address.metadata.name! })) as Cr;
        return current.status?.associatedTo?.name === 'svc-step-h1';
      },
    ),
  );

  it(
    'hold released, the tenant Service not yet pinned (the gap)',
    handoffStep(
      'hold released, the tenant Service not yet pinned (the gap)',
      'step-h2',
      { apiGroup: '', resource: 'services', operation: 'UPDATE', when: `request.namespace == "${NAMESPACE}"` },
      async (address) => (await holdsOf(address.metadata.name!)).length === 0,
    ),
  );
});
