/**
 * A token service for the registry's `auth: token` mode (the distribution
 * token spec): checks Basic credentials, then issues an ES256 JWT whose x5c
 * header carries a self-signed certificate the registry trusts
 * (rootcertbundle). The registry verifies it; this side only signs.
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomUUID, sign, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface TokenRequest {
  readonly account?: string;
  readonly service?: string;
  readonly scopes: string[];
  readonly authenticated: boolean;
}

export interface TokenService {
  readonly realm: string;
  readonly service: string;
  readonly issuer: string;
  /** PEM of the certificate the registry must trust. */
  readonly rootCertBundle: string;
  readonly requests: TokenRequest[];
  stop(): Promise<void>;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

export async function startTokenService(users: Record<string, string>): Promise<TokenService> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-token-'));
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=e2e-token-issuer', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ], { stdio: 'ignore' });
  const key = createPrivateKey(readFileSync(join(dir, 'key.pem')));
  const certDer = new X509Certificate(readFileSync(join(dir, 'cert.pem'))).raw;
  const service = 'e2e-registry';
  const issuer = 'e2e-token-issuer';
  const requests: TokenRequest[] = [];

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://token');
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [user, password] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(/:(.*)/s) : [];
    const authenticated = user !== undefined && users[user] === password;
    const scopes = url.searchParams.getAll('scope');
    requests.push({ account: url.searchParams.get('account') ?? undefined, service: url.searchParams.get('service') ?? undefined, scopes, authenticated });
    if (!authenticated) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"code":"UNAUTHORIZED"}]}');
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    const access = scopes.flatMap((scope) => {
      const [type, name, actions] = scope.split(':');
      return type && name && actions ? [{ type, name, actions: actions.split(',') }] : [];
    });
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ES256', x5c: [certDer.toString('base64')] }));
    const claims = b64url(JSON.stringify({ iss: issuer, sub: user, aud: service, exp: now + 300, nbf: now - 10, iat: now, jti: randomUUID(), access }));
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' });
    const token = `${header}.${claims}.${b64url(signature)}`;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, access_token: token, expires_in: 300 }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service,
    issuer,
    rootCertBundle: join(dir, 'cert.pem'),
    requests,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
