import { describe, expect, it } from 'vitest';
import { parseOptions } from '../../../../controllers/metallb-iad/adopt/command.js';
import { InputError } from '../../../../lib/errors.js';

describe('metallb-iad adopt: flags', () => {
  it('takes namespaces and Services repeated or comma-separated, as the chart’s Job passes them', () => {
    const options = parseOptions(['--class', 'legacy', '--pool', 'legacy', '--namespace=tenant-a,tenant-b', '--namespace', 'tenant-c', '--service=tenant-d/web,tenant-e/api']);
    expect(options).toMatchObject({
      className: 'legacy',
      pool: 'legacy',
      namespaces: ['tenant-a', 'tenant-b', 'tenant-c'],
      services: ['tenant-d/web', 'tenant-e/api'],
      undo: false,
      timeoutMs: 120_000,
    });
  });

  it('undo takes the class alone', () => {
    expect(parseOptions(['--class', 'legacy', '--undo', '--timeout=30'])).toMatchObject({ className: 'legacy', undo: true, timeoutMs: 30_000 });
    expect(() => parseOptions(['--class', 'legacy', '--undo', '--pool', 'legacy'])).toThrow('--undo takes the whole class');
  });

  it.each([
    [['--pool', 'legacy', '--all'], '--class must name an IPAddressClass'],
    [['--class', 'legacy', '--all'], '--pool must name an IPAddressPool'],
    [['--class', 'legacy', '--pool', 'legacy'], 'select Services'],
    [['--class', 'legacy', '--pool', 'legacy', '--namespace=tenant-a,'], '--namespace must name namespaces, got ""'],
    [['--class', 'legacy', '--pool', 'legacy', '--service=tenant-a'], '--service tenant-a: give it as namespace/name'],
    [['--class', 'legacy', '--pool', 'legacy', '--all', '--timeout=0'], '--timeout must be a positive number'],
  ])('refuses %j: %s', (argv, message) => {
    let error: unknown;
    try {
      parseOptions(argv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toContain(message);
  });
});
