import { describe, expect, it } from 'vitest';
import { IP_ADDRESS, IP_ADDRESS_CLAIM, IP_ADDRESS_CLASS, KINDS } from '../../api/v1alpha1/schema/index.js';
import { CustomResourceDefinition } from '../../constructs/crd/custom-resource-definition.js';
import { crdValidator } from '../support/crd-validator.js';

const apiVersion = 'local.sdn.cozystack.io/v1alpha1';
const validateClass = crdValidator(IP_ADDRESS_CLASS);
const validateAddress = crdValidator(IP_ADDRESS);
const validateClaim = crdValidator(IP_ADDRESS_CLAIM);

const publicClass = {
  apiVersion,
  kind: 'IPAddressClass',
  metadata: { name: 'public', annotations: { 'ipaddressclass.local.sdn.cozystack.io/is-default-class': 'true' } },
  spec: {
    provisioner: 'metallb.drivers.local.sdn.cozystack.io',
    reclaimPolicy: 'Retain',
    parameters: { addresses: ['203.0.113.0/24'] },
  },
};

const boundAddress = {
  apiVersion,
  kind: 'IPAddress',
  metadata: { name: 'ip-203-0-113-7' },
  spec: {
    className: 'public',
    address: '203.0.113.7',
    reclaimPolicy: 'Delete',
    claimRef: { namespace: 'tenant-a', name: 'web', uid: 'claim-uid-1' },
    source: { fromClass: {} },
  },
  status: {
    phase: 'Bound',
    associatedTo: { kind: 'Service', namespace: 'tenant-a', name: 'web' },
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Bound', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  },
};

const claim = {
  apiVersion,
  kind: 'IPAddressClaim',
  metadata: { name: 'web', namespace: 'tenant-a' },
  spec: { className: 'public' },
};

function withSpec<T extends { spec: object }>(object: T, spec: Record<string, unknown>): T {
  return { ...object, spec: { ...object.spec, ...spec } };
}

function without<T extends { spec: Record<string, unknown> }>(object: T, field: string): T {
  const spec = { ...object.spec };
  delete spec[field];
  return { ...object, spec };
}

describe('generated CRD schemas accept the documented examples', () => {
  it.each([
    ['the example class', validateClass, publicClass],
    ['a class with only a provisioner', validateClass, { apiVersion, kind: 'IPAddressClass', metadata: { name: 'x' }, spec: { provisioner: 'p' } }],
    ['a bound address', validateAddress, boundAddress],
    ['a static address from a provider', validateAddress, withSpec(without(boundAddress, 'claimRef'), { source: { providerRef: { id: 'eipalloc-0abc' } } })],
    ['a pre-bound address without claim UID', validateAddress, withSpec(boundAddress, { claimRef: { namespace: 'tenant-a', name: 'web' } })],
    ['an IPv6 address', validateAddress, withSpec(boundAddress, { address: '2001:db8::7' })],
    ['a claim for the default class', validateClaim, { ...claim, spec: {} }],
    ['a Dual claim', validateClaim, withSpec(claim, { family: 'Dual' })],
    ['a pinned claim', validateClaim, withSpec(claim, { addressName: 'ip-203-0-113-7', family: 'IPv6' })],
    [
      'a bound claim status',
      validateClaim,
      {
        ...claim,
        status: { phase: 'Bound', className: 'public', addresses: [{ name: 'ip-203-0-113-7', address: '203.0.113.7' }] },
      },
    ],
  ])('%s', (_name, validate, object) => {
    expect(validate(object).errors).toEqual([]);
  });

  it('keeps unknown class parameters (preserve-unknown-fields object)', () => {
    const result = validateClass(withSpec(publicClass, { parameters: { addresses: ['10.0.0.0/8'], bgp: { peers: 3 } } }));
    expect(result.errors).toEqual([]);
    expect(result.object.spec).toMatchObject({ parameters: { bgp: { peers: 3 } } });
  });
});

describe('defaults', () => {
  it('reclaimPolicy defaults to Retain on classes and addresses', () => {
    expect(validateClass(without(publicClass, 'reclaimPolicy')).object.spec).toMatchObject({ reclaimPolicy: 'Retain' });
    expect(validateAddress(without(boundAddress, 'reclaimPolicy')).object.spec).toMatchObject({ reclaimPolicy: 'Retain' });
  });

  it('claim family defaults to IPv4', () => {
    expect(validateClaim(claim).object.spec).toMatchObject({ family: 'IPv4' });
  });
});

describe('generated CRD schemas reject invalid objects', () => {
  it.each([
    ['a reclaimPolicy outside the enum', validateClass, withSpec(publicClass, { reclaimPolicy: 'Keep' }), 'must be equal to one of the allowed values'],
    ['a class without provisioner', validateClass, without(publicClass, 'provisioner'), "must have required property 'provisioner'"],
    ['an empty provisioner', validateClass, withSpec(publicClass, { provisioner: '' }), 'must NOT have fewer than 1 characters'],
    ['an address with both source arms', validateAddress, withSpec(boundAddress, { source: { fromClass: {}, providerRef: { id: 'x' } } }), 'exactly one of fromClass or providerRef must be set'],
    ['an address with no source arm', validateAddress, withSpec(boundAddress, { source: {} }), 'exactly one of fromClass or providerRef must be set'],
    ['an address without source', validateAddress, without(boundAddress, 'source'), "must have required property 'source'"],
    ['an address without address', validateAddress, without(boundAddress, 'address'), "must have required property 'address'"],
    ['an address without className', validateAddress, without(boundAddress, 'className'), "must have required property 'className'"],
    ['a claimRef without name', validateAddress, withSpec(boundAddress, { claimRef: { namespace: 'tenant-a' } }), "must have required property 'name'"],
    ['a providerRef without id', validateAddress, withSpec(boundAddress, { source: { providerRef: {} } }), "must have required property 'id'"],
    ['an address phase outside the enum', validateAddress, { ...boundAddress, status: { phase: 'Reserved' } }, 'must be equal to one of the allowed values'],
    ['associatedTo without kind', validateAddress, { ...boundAddress, status: { associatedTo: { namespace: 'a', name: 'b' } } }, "must have required property 'kind'"],
    ['a condition without reason', validateAddress, { ...boundAddress, status: { conditions: [{ type: 'Ready', status: 'True', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] } }, "must have required property 'reason'"],
    ['a claim family outside the enum', validateClaim, withSpec(claim, { family: 'IPv5' }), 'must be equal to one of the allowed values'],
    ['a claim phase outside the enum', validateClaim, { ...claim, status: { phase: 'Available' } }, 'must be equal to one of the allowed values'],
    ['a bound address entry without address', validateClaim, { ...claim, status: { addresses: [{ name: 'ip-1' }] } }, "must have required property 'address'"],
  ])('%s', (_name, validate, object, message) => {
    const { errors } = validate(object);
    expect(errors.some((e) => e.includes(message)), errors.join('\n')).toBe(true);
  });
});

describe('who may draw from a class (docs/access.md)', () => {
  it('takes a label selector and a per-namespace limit, and may change both', () => {
    const restricted = withSpec(publicClass, {
      namespaceSelector: { matchLabels: { tier: 'premium' }, matchExpressions: [{ key: 'region', operator: 'In', values: ['eu'] }, { key: 'legacy', operator: 'DoesNotExist' }] },
      maxClaimsPerNamespace: 2,
    });
    expect(validateClass(restricted).errors).toEqual([]);
    expect(validateClass(withSpec(publicClass, { maxClaimsPerNamespace: 0 }), restricted).errors).toEqual([]);
  });

  it.each([
    [{ namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } }, 'values must be non-empty for In and NotIn'],
    [{ namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['x'] }] } }, 'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist'],
    [{ namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'Like', values: ['x'] }] } }, 'operator'],
    [{ namespaceSelector: { matchLabels: { tier: 1 } } }, 'matchLabels'],
    [{ maxClaimsPerNamespace: -1 }, 'maxClaimsPerNamespace'],
  ])('refuses %j', (spec, message) => {
    const errors = validateClass(withSpec(publicClass, spec)).errors;
    expect(errors.some((e) => e.includes(message)), errors.join('\n')).toBe(true);
  });
});

describe('transition rules (self == oldSelf)', () => {
  it('spec.provisioner is immutable', () => {
    expect(validateClass(withSpec(publicClass, { provisioner: 'other' }), publicClass).errors).toEqual([
      '/spec/provisioner: provisioner is immutable',
    ]);
  });

  it('spec.address is immutable', () => {
    expect(validateAddress(withSpec(boundAddress, { address: '203.0.113.8' }), boundAddress).errors).toEqual([
      '/spec/address: address is immutable',
    ]);
  });

  it('other fields stay mutable', () => {
    expect(validateClass(withSpec(publicClass, { reclaimPolicy: 'Delete' }), publicClass).errors).toEqual([]);
    expect(validateAddress(without(boundAddress, 'claimRef'), boundAddress).errors).toEqual([]);
  });
});

describe('a claim’s spec follows the PersistentVolumeClaim rules', () => {
  const resolved = { phase: 'Pending', className: 'public' };
  const bound = { phase: 'Bound', className: 'public', addresses: [{ name: 'ip-203-0-113-7', address: '203.0.113.7' }] };
  const stored = (spec: Record<string, unknown>, status: Record<string, unknown> = bound) =>
    validateClaim({ ...claim, spec: { family: 'IPv4', ...spec }, status }).object as typeof claim & { status: object };
  const update = (old: ReturnType<typeof stored>, spec: Record<string, unknown>) => validateClaim({ ...old, spec }, old).errors;

  it('spec.className can be neither changed nor removed once set', () => {
    const old = stored({ className: 'public' });
    expect(update(old, { className: 'premium', family: 'IPv4' })).toEqual(['/spec: spec.className is immutable once set']);
    expect(update(old, { family: 'IPv4' })).toEqual(['/spec: spec.className is immutable once set']);
    expect(update(old, { className: 'public', family: 'IPv4' })).toEqual([]);
  });

  it('an unset spec.className may be set to the class the claim resolved to, and to no other', () => {
    const old = stored({}, resolved);
    expect(update(old, { className: 'public', family: 'IPv4' })).toEqual([]);
    expect(update(old, { className: 'premium', family: 'IPv4' })).toEqual([
      '/: spec.className can be set only to the class the claim resolved to (status.className)',
    ]);
    expect(update(stored({}, {}), { className: 'premium', family: 'IPv4' })).toEqual([]); // nothing resolved yet
    expect(update(stored({ className: '' }, resolved), { className: 'premium', family: 'IPv4' })).toEqual([
      '/: spec.className can be set only to the class the claim resolved to (status.className)',
    ]);
  });

  it('spec.family is immutable (removing it defaults it, which is a change too)', () => {
    const old = stored({ className: 'public', family: 'Dual' });
    expect(update(old, { className: 'public', family: 'IPv4' })).toEqual(['/spec/family: spec.family is immutable']);
    expect(update(old, { className: 'public' })).toEqual(['/spec/family: spec.family is immutable']);
    expect(update(old, { className: 'public', family: 'Dual' })).toEqual([]);
  });

  it('spec.addressName can be neither changed nor removed once set; set later only while nothing is bound', () => {
    const pinned = stored({ className: 'public', addressName: 'ip-203-0-113-7' });
    expect(update(pinned, { className: 'public', family: 'IPv4', addressName: 'ip-203-0-113-8' })).toEqual(['/spec: spec.addressName is immutable once set']);
    expect(update(pinned, { className: 'public', family: 'IPv4' })).toEqual(['/spec: spec.addressName is immutable once set']);
    expect(update(stored({ className: 'public' }), { className: 'public', family: 'IPv4', addressName: 'ip-203-0-113-8' })).toEqual([
      '/: spec.addressName can be set only while no address is bound to the claim',
    ]);
    expect(update(stored({ className: 'public' }, resolved), { className: 'public', family: 'IPv4', addressName: 'ip-203-0-113-8' })).toEqual([]);
  });

  it('the rules name the field for the apiserver’s error', () => {
    const rules = (CustomResourceDefinition.openApiSchema(IP_ADDRESS_CLAIM)['x-kubernetes-validations'] ?? []) as { fieldPath?: string }[];
    expect(rules.map((r) => r.fieldPath)).toEqual(['.spec.className', '.spec.addressName']);
  });
});

describe('CRD shape', () => {
  it.each(KINDS.map((k) => [k.kind, k] as const))('%s schema is structural: every node has a type', (_kind, definition) => {
    const untyped: string[] = [];
    const walk = (node: Record<string, unknown>, path: string) => {
      if (!node.type && !node['x-kubernetes-preserve-unknown-fields']) {
        untyped.push(path);
      }
      for (const [name, child] of Object.entries((node.properties as Record<string, Record<string, unknown>>) ?? {})) {
        walk(child, `${path}.${name}`);
      }
      if (node.items) {
        walk(node.items as Record<string, unknown>, `${path}[]`);
      }
    };
    walk(CustomResourceDefinition.openApiSchema(definition), definition.kind);
    expect(untyped).toEqual([]);
  });

  it('all three kinds have the status subresource (a class’s carries its driver’s conditions)', () => {
    expect(IP_ADDRESS_CLASS.status).toBeDefined();
    expect(IP_ADDRESS.status).toBeDefined();
    expect(IP_ADDRESS_CLAIM.status).toBeDefined();
  });

  it.each(KINDS.map((k) => [k.kind, k] as const))('%s: structural, as the apiserver demands (no patternProperties, no $ref, no allOf/anyOf types)', (_kind, definition) => {
    const refused: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
        if (['patternProperties', '$ref', 'definitions', '$id'].includes(key)) refused.push(`${path}: ${key}`);
        walk(value, `${path}.${key}`);
      }
    };
    walk(CustomResourceDefinition.openApiSchema(definition), definition.kind);
    expect(refused).toEqual([]);
  });
});
