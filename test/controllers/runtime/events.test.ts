import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { warnAndRethrow } from '../../../controllers/runtime/events.js';

const claim = { apiVersion: 'local.sdn.cozystack.io/v1alpha1', kind: 'IPAddressClaim', metadata: { name: 'web', namespace: 'tenant-a', uid: 'u1' } };

describe('warnAndRethrow', () => {
  it('says the apiserver refusal on the object, then rethrows for backoff', () => {
    const said: string[] = [];
    const error = new k8s.ApiException(422, 'Unknown API Status Code!', JSON.stringify({ message: 'spec.address: Invalid value' }), {});
    expect(() => warnAndRethrow({ event: (_o, type, reason, message) => said.push(`${type} ${reason} ${message}`) }, claim, 'RecordFailed', 'creating IPAddress', error)).toThrow(error);
    expect(said).toEqual(['Warning RecordFailed creating IPAddress: spec.address: Invalid value']);
  });
});
