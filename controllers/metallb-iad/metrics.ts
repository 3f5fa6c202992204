/**
 * The driver's address metrics (docs/driver.md, "Metrics"): computed from the
 * caches at each scrape, one series per served class (and family, and phase),
 * never per claim or address, so cardinality follows the classes.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IPAddressClass } from '../../api/v1alpha1/index.js';
import { classBooksOf, COUNTED_PHASES, type FamilyBooks } from './class-books.js';
import { servedBy } from './class-parameters.js';
import { CLASS_CONDITION, configurationVerdict } from './class-status.js';
import type { DriverStore } from './store.js';

type Reader = Pick<DriverStore, 'allClasses' | 'addressesOfClass' | 'placeholdersOf' | 'poolNamed' | 'configurationStates' | 'metallbNamespace'>;

export interface DriverMetrics {
  /** A failed write of a class's MetalLB pool or advertisement. */
  backendFailure(className: string): void;
}

/** The books of every served class with valid parameters. */
function servedBooks(store: Reader): { ipClass: IPAddressClass; books: FamilyBooks[] }[] {
  return store
    .allClasses()
    .filter((c) => servedBy(c) && !c.metadata.deletionTimestamp)
    .flatMap((ipClass) => {
      const books = classBooksOf(store, ipClass);
      return books ? [{ ipClass, books }] : [];
    });
}

/** A gauge recomputed from the caches at each scrape. */
function gaugeFromCaches(registry: Registry, name: string, help: string, labelNames: string[], fill: (set: (labels: Record<string, string>, value: number) => void) => void) {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.set(labels, value));
    },
  });
}

export function registerDriverMetrics(registry: Registry, store: Reader): DriverMetrics {
  const perFamily = (set: (labels: Record<string, string>, value: number) => void, value: (b: FamilyBooks) => number) => {
    for (const { ipClass, books } of servedBooks(store)) {
      for (const b of books) {
        set({ class: ipClass.metadata.name!, family: b.family }, value(b));
      }
    }
  };
  const perClass = (set: (labels: Record<string, string>, value: number) => void, value: (books: FamilyBooks[]) => number) => {
    for (const { ipClass, books } of servedBooks(store)) {
      set({ class: ipClass.metadata.name! }, value(books));
    }
  };
  gaugeFromCaches(registry, 'cozy_addresses_class_capacity', "Addresses a class's ranges hold.", ['class', 'family'], (set) => perFamily(set, (b) => Number(b.capacity)));
  gaugeFromCaches(registry, 'cozy_addresses_class_free', 'Addresses MetalLB can still hand out in a class.', ['class', 'family'], (set) => perFamily(set, (b) => Number(b.free)));
  gaugeFromCaches(registry, 'cozy_addresses_class_addresses', 'Recorded IPAddresses of a class, by phase.', ['class', 'family', 'phase'], (set) => {
    for (const { ipClass, books } of servedBooks(store)) {
      for (const b of books) {
        for (const phase of COUNTED_PHASES) {
          set({ class: ipClass.metadata.name!, family: b.family, phase }, b.phases[phase]);
        }
      }
    }
  });
  gaugeFromCaches(registry, 'cozy_addresses_holds', 'Addresses of a class held by a placeholder.', ['class'], (set) => perClass(set, (books) => books.reduce((n, b) => n + b.held, 0)));
  gaugeFromCaches(registry, 'cozy_addresses_attachments', 'Addresses of a class associated with a Service.', ['class'], (set) => perClass(set, (books) => books.reduce((n, b) => n + b.attached, 0)));
  gaugeFromCaches(registry, 'cozy_addresses_class_backend_ready', "1 while a class's MetalLB pool is written as the class says.", ['class'], (set) => {
    for (const c of store.allClasses().filter((c) => servedBy(c) && !c.metadata.deletionTimestamp)) {
      const ready = c.status?.conditions?.find((x) => x.type === CLASS_CONDITION.backendReady)?.status === 'True';
      set({ class: c.metadata.name! }, ready ? 1 : 0);
    }
  });
  // Labelled by MetalLB's namespace: an unlabelled gauge would report 0 even while MetalLB says nothing.
  gaugeFromCaches(registry, 'cozy_addresses_metallb_configuration_valid', 'MetalLB reports its configuration valid (1) or refuses it (0); absent while it reports nothing.', ['namespace'], (set) => {
    const verdict = configurationVerdict(store.configurationStates());
    if (verdict.state !== 'Unknown') {
      set({ namespace: store.metallbNamespace }, verdict.state === 'Valid' ? 1 : 0);
    }
  });
  const failures = new Counter({
    name: 'cozy_addresses_backend_failures_total',
    help: "Failed writes of a class's MetalLB pool or advertisement.",
    labelNames: ['class'],
    registers: [registry],
  });
  return { backendFailure: (className) => failures.inc({ class: className }) };
}
