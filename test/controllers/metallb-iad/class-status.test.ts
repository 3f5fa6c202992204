import { describe, expect, it } from 'vitest';
import { classConditions, configurationVerdict, sameConditions } from '../../../controllers/metallb-iad/class-status.js';
import type { MetallbObject } from '../../../controllers/metallb-iad/store.js';
import { publicClass } from './fixtures.js';

const state = (name: string, status: Record<string, unknown>): MetallbObject =>
  ({ apiVersion: 'metallb.io/v1beta1', kind: 'ConfigurationState', metadata: { name, namespace: 'metallb-system' }, status }) as MetallbObject;

describe('MetalLB’s configuration state', () => {
  it('is unknown without ConfigurationState objects, valid when every one is, invalid (with why) when any is not', () => {
    expect(configurationVerdict([]).state).toBe('Unknown');
    expect(configurationVerdict([state('controller', { result: 'Valid', conditions: [{ type: 'ConfigReconcilerValid', status: 'True', reason: 'None' }] })])).toEqual({ state: 'Valid' });
    expect(
      configurationVerdict([
        state('speaker-n1', { result: 'Valid' }),
        state('controller', { conditions: [{ type: 'ConfigReconcilerValid', status: 'False', reason: 'ConfigurationError', message: 'CIDR "203.0.113.0/28" in pool "iad-a" overlaps with already defined CIDR "203.0.113.0/24"' }] }),
      ]),
    ).toEqual({ state: 'Invalid', message: 'controller: CIDR "203.0.113.0/28" in pool "iad-a" overlaps with already defined CIDR "203.0.113.0/24"' });
    expect(configurationVerdict([state('controller', { result: 'Invalid', errorSummary: 'bad pool' })])).toEqual({ state: 'Invalid', message: 'controller: bad pool' });
  });
});

describe('a class’s conditions', () => {
  it('keep their transition time while their status stays, and compare equal regardless of it', () => {
    const first = classConditions(publicClass(), { reason: 'PoolWritten', message: 'ok' }, { state: 'Valid' }, '2026-01-01T00:00:00Z');
    expect(first.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual(['BackendReady=True/PoolWritten', 'MetalLBConfigured=True/ConfigurationValid']);
    const ipClass = { ...publicClass(), status: { conditions: first } };
    const again = classConditions(ipClass, { reason: 'PoolWritten', message: 'ok' }, { state: 'Valid' }, '2026-02-02T00:00:00Z');
    expect(again).toEqual(first);
    expect(sameConditions(first, again)).toBe(true);
    const refused = classConditions(ipClass, { reason: 'OverlapsForeignPool', message: 'x' }, { state: 'Invalid', message: 'y' }, '2026-02-02T00:00:00Z');
    expect(refused.map((c) => `${c.type}=${c.status}/${c.reason}@${c.lastTransitionTime}`)).toEqual([
      'BackendReady=False/OverlapsForeignPool@2026-02-02T00:00:00Z',
      'MetalLBConfigured=False/ConfigurationError@2026-02-02T00:00:00Z',
    ]);
    expect(sameConditions(first, refused)).toBe(false);
  });
});
