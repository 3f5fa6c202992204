import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialsFrom, dockerConfigCredentials, mergeScopes, parseChallenges } from '../../../lib/oci/registry-auth.js';

const configDir = (config: unknown) => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-config-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
};

describe('registry authentication', () => {
  it('parses WWW-Authenticate challenges, quoted commas included', () => {
    expect(parseChallenges('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"')).toEqual([
      { scheme: 'bearer', params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' } },
    ]);
    expect(parseChallenges('Basic realm="Registry Realm"')).toEqual([{ scheme: 'basic', params: { realm: 'Registry Realm' } }]);
  });

  it('merges scopes per resource', () => {
    expect(mergeScopes(['repository:a:pull,push', 'repository:a:pull', 'repository:b:pull'])).toEqual(['repository:a:pull,push', 'repository:b:pull']);
  });

  it('reads auths entries by host, with or without a scheme, and identity tokens', () => {
    const dir = configDir({
      auths: {
        'https://registry.example:5000/v1/': { auth: Buffer.from('u:p:with:colons').toString('base64') },
        'other.example': { identitytoken: 'refresh-me' },
      },
    });
    expect(dockerConfigCredentials('registry.example:5000', { DOCKER_CONFIG: dir })).toMatchObject({ username: 'u', password: 'p:with:colons' });
    expect(dockerConfigCredentials('other.example', { DOCKER_CONFIG: dir })).toMatchObject({ identityToken: 'refresh-me' });
    expect(dockerConfigCredentials('absent.example', { DOCKER_CONFIG: dir })).toBeUndefined();
    expect(dockerConfigCredentials('x', { DOCKER_CONFIG: join(dir, 'none') })).toBeUndefined();
  });

  it('names the file when the docker config is not JSON, and a helper that cannot run', () => {
    const bad = mkdtempSync(join(tmpdir(), 'docker-config-'));
    writeFileSync(join(bad, 'config.json'), '{');
    expect(() => dockerConfigCredentials('x', { DOCKER_CONFIG: bad })).toThrow(`push: ${join(bad, 'config.json')}: not JSON`);
    const helper = configDir({ credHelpers: { 'x.example': 'nonexistent-helper' } });
    expect(() => dockerConfigCredentials('x.example', { DOCKER_CONFIG: helper, PATH: '' })).toThrow(
      'names credential helper nonexistent-helper, but docker-credential-nonexistent-helper cannot run: ENOENT',
    );
  });

  it('--password-stdin needs --username and a password; --username alone is refused', async () => {
    const args = { registry: 'r', 'password-stdin': true };
    await expect(credentialsFrom(args, {}, async () => 's3cret\n')).rejects.toThrow('--password-stdin needs --username');
    await expect(credentialsFrom({ ...args, username: 'u' }, {}, async () => '\n')).rejects.toThrow('read an empty password');
    await expect(credentialsFrom({ ...args, username: 'u' }, {}, async () => 's3cret\n')).resolves.toMatchObject({ username: 'u', password: 's3cret' });
    await expect(credentialsFrom({ registry: 'r', 'password-stdin': false, username: 'u' }, {})).rejects.toThrow('--username needs --password-stdin');
  });
});
