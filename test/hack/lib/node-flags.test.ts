import { describe, expect, it } from 'vitest';
import { nodeFlagsFrom } from '../../../hack/lib/node-flags.js';

describe('nodeFlagsFrom', () => {
  it('is undefined when the variable is unset, so the caller keeps its default', () => {
    expect(nodeFlagsFrom(undefined)).toBeUndefined();
  });

  it('is no flags for an empty or blank value, not the default', () => {
    expect(nodeFlagsFrom('')).toEqual([]);
    expect(nodeFlagsFrom('   ')).toEqual([]);
  });

  it('splits on any run of whitespace, dropping the ends', () => {
    expect(nodeFlagsFrom('  --cpu-prof \t --cpu-prof-dir=/tmp/prof\n')).toEqual(['--cpu-prof', '--cpu-prof-dir=/tmp/prof']);
  });
});
