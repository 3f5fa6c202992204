import { describe, expect, it } from 'vitest';
import { CandidateIndex } from '../../../controllers/address-controller/candidates.js';
import { decideAddress, missingFamilies, reclaimAction } from '../../../controllers/address-controller/decisions.js';
import { requestedFamilies } from '../../../api/v1alpha1/index.js';
import { familyOf } from '../../../api/ip.js';
import { address, available, claim, ref } from './fixtures.js';

describe('familyOf', () => {
  it.each([
    ['203.0.113.7', 'IPv4'],
    ['2001:db8::7', 'IPv6'],
    ['::ffff:203.0.113.7', 'IPv4'],
    ['::ffff:cb00:7107', 'IPv4'],
    ['::1', 'IPv6'],
    ['not-an-ip', undefined],
    ['203.0.113.0/24', undefined],
    ['', undefined],
  ])('%j is %s', (ip, family) => {
    expect(familyOf(ip)).toBe(family);
  });
});

describe('requested and missing families', () => {
  it('maps the API families, and nothing else', () => {
    expect(requestedFamilies(undefined)).toEqual(['IPv4']);
    expect(requestedFamilies('Dual')).toEqual(['IPv4', 'IPv6']);
    expect(requestedFamilies('IPv5')).toBeUndefined();
  });

  it('a Lost address does not satisfy its family', () => {
    const lost = address('203.0.113.7', {}, { phase: 'Lost' });
    expect(missingFamilies(['IPv4'], [lost])).toEqual(['IPv4']);
    expect(missingFamilies(['IPv4', 'IPv6'], [address('203.0.113.7')])).toEqual(['IPv6']);
  });

  it('anything but Delete reclaims as Retain', () => {
    expect(reclaimAction('Delete')).toBe('Delete');
    for (const policy of ['Retain', '', undefined, 'Recycle']) {
      expect(reclaimAction(policy)).toBe('Retain');
    }
  });
});

describe('decideAddress', () => {
  const live = { ...claim(), metadata: { ...claim().metadata } };
  it.each([
    ['no claimRef → Available', address('203.0.113.7'), undefined, { action: 'phase', phase: 'Available' }],
    ['already Available → nothing', address('203.0.113.7', {}, available), undefined, { action: 'none' }],
    ['claim missing, Retain → Released', address('203.0.113.7', { claimRef: ref('claim-uid-1') }), undefined, { action: 'phase', phase: 'Released' }],
    ['claim missing, Delete → delete', address('203.0.113.7', { claimRef: ref('claim-uid-1'), reclaimPolicy: 'Delete' }), undefined, { action: 'delete' }],
    ['UID mismatch → Released', address('203.0.113.7', { claimRef: ref('other') }), live, { action: 'phase', phase: 'Released' }],
    ['empty ref UID → wait', address('203.0.113.7', { claimRef: ref() }), live, { action: 'none' }],
    ['matching → Bound', address('203.0.113.7', { claimRef: ref('claim-uid-1') }), live, { action: 'phase', phase: 'Bound' }],
    ['Conflict is sticky', address('203.0.113.7', { claimRef: ref('claim-uid-1') }, { phase: 'Conflict' }), undefined, { action: 'none' }],
  ] as const)('%s', (_name, a, c, expected) => {
    expect(decideAddress(a, c)).toEqual(expected);
  });
});

describe('CandidateIndex', () => {
  it('keeps each class+family bucket sorted and drops addresses that stop being candidates', () => {
    const index = new CandidateIndex();
    for (const ip of ['203.0.113.9', '203.0.113.10', '203.0.113.2']) {
      index.upsert(address(ip, {}, available));
    }
    index.upsert(address('2001:db8::1', {}, available));
    expect(index.first('public', 'IPv4')).toBe('ip-203-0-113-10');
    expect(index.first('public', 'IPv4', new Set(['ip-203-0-113-10']))).toBe('ip-203-0-113-2');
    expect(index.first('public', 'IPv6')).toBe('ip-2001-db8--1');
    index.upsert(address('203.0.113.10', { claimRef: ref('x') }, available));
    expect(index.first('public', 'IPv4')).toBe('ip-203-0-113-2');
    index.remove('ip-203-0-113-2');
    expect(index.first('public', 'IPv4')).toBe('ip-203-0-113-9');
    expect(index.size('public', 'IPv4')).toBe(1);
    expect(index.first('private', 'IPv4')).toBeUndefined();
  });
});
