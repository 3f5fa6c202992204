/**
 * What a Service looked like to the control plane while a deputy wrote it: a poll every
 * 100 ms of the IPs MetalLB gave it, the pin it carries and the driver's verdict, kept as
 * the list of distinct states in order (a read is no write: the driver's count is untouched).
 */
import type * as k8s from '@kubernetes/client-node';

/** The condition the driver keeps on a Service naming a claim (docs/driver.md). */
export const SERVICE_ATTACHED = 'local.sdn.cozystack.io/Attached';

export interface ServiceState {
  /** status.loadBalancer.ingress IPs, joined ("" for none). */
  readonly ingress: string;
  /** metallb.io/loadBalancerIPs ("" for none). */
  readonly pin: string;
  /** The Attached condition as "status/reason" ("" when absent). */
  readonly attached: string;
}

export interface Observed {
  /** Each distinct state, with when it was first seen (epoch ms). */
  readonly states: readonly (ServiceState & { readonly at: number })[];
  readonly polls: number;
}

export function stateOf(service: k8s.V1Service): ServiceState {
  const attached = (service.status?.conditions ?? []).find((c) => c.type === SERVICE_ATTACHED);
  return {
    ingress: (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '').filter(Boolean).join(','),
    pin: service.metadata?.annotations?.['metallb.io/loadBalancerIPs'] ?? '',
    attached: attached ? `${attached.status}/${attached.reason ?? ''}` : '',
  };
}

/** Starts polling; the returned function stops it and gives what was seen. */
export function observe(core: k8s.CoreV1Api, namespace: string, name: string, everyMs = 100): () => Promise<Observed> {
  const states: (ServiceState & { at: number })[] = [];
  let polls = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const service = await core.readNamespacedService({ namespace, name }).catch(() => undefined);
      polls++;
      const state = service ? stateOf(service) : { ingress: '(gone)', pin: '', attached: '' };
      const last = states.at(-1);
      if (!last || last.ingress !== state.ingress || last.pin !== state.pin || last.attached !== state.attached) {
        states.push({ ...state, at: Date.now() });
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return { states, polls };
  };
}

/** "ingress 203.0.113.130, pin …, Attached True/Attached → +1200 ms ingress (none) …" */
export function describeObserved(o: Observed, t0: number): string {
  return o.states
    .map((s) => `${s.at - t0 >= 0 ? '+' : ''}${s.at - t0} ms: ingress ${s.ingress || '(none)'}, pin ${s.pin || '(none)'}, Attached ${s.attached || '(absent)'}`)
    .join(' → ');
}
