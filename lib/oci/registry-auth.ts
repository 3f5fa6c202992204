/**
 * Registry authentication for pushing (lib/oci/push.ts), the way docker, crane and oras do it:
 *
 * - credentials from `--username` + `--password-stdin`, else the docker config
 *   (`$DOCKER_CONFIG/config.json`, default `~/.docker/config.json`): `auths`
 *   entries (`auth` = base64 user:password, `username`/`password`,
 *   `identitytoken`), or a credential helper (`credHelpers`, `credsStore`:
 *   `docker-credential-<name> get`);
 * - the registry's 401 challenge decides the scheme (RFC 7235): `Basic`
 *   sends the credentials; `Bearer realm=…,service=…,scope=…` (RFC 6750 and the
 *   distribution token spec) fetches a token from the realm, with the
 *   credentials as Basic auth (or the identity token as an OAuth2 refresh
 *   token), anonymously when there are none, and retries with it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { InputError } from '../errors.js';

export interface Credentials {
  readonly username?: string;
  readonly password?: string;
  /** An OAuth2 refresh token (`identitytoken` in the docker config). */
  readonly identityToken?: string;
  /** Where they came from, for messages (never the secret). */
  readonly source: string;
}

/** The authentication flags of every push (`synth push`, `npm run images -- --push`); credentialsFrom reads them. */
export function authFlags<T>(parser: Argv<T>) {
  return parser
    .option('username', { type: 'string', describe: 'Registry user (with --password-stdin)' })
    .option('password-stdin', { type: 'boolean', default: false, describe: 'Read the password or token from stdin' });
}

/** The registry and authentication flags of `synth push`. */
export function pushFlags<T>(parser: Argv<T>) {
  return authFlags(
    parser
      .option('registry', { type: 'string', demandOption: true, describe: 'Registry host[:port]' })
      .option('plain-http', { type: 'boolean', default: false, describe: 'HTTP instead of HTTPS (a registry on loopback)' }),
  );
}

interface AuthArgs {
  registry: string;
  username?: string;
  'password-stdin': boolean;
}

/** Credentials for `args.registry`, or undefined to go anonymous. */
export async function credentialsFrom(args: AuthArgs, env: NodeJS.ProcessEnv = process.env, stdin: () => Promise<string> = readStdin): Promise<Credentials | undefined> {
  if (args['password-stdin']) {
    if (!args.username) {
      throw new InputError('push: --password-stdin needs --username');
    }
    const password = (await stdin()).replace(/\r?\n$/, '');
    if (!password) {
      throw new InputError('push: --password-stdin read an empty password');
    }
    return { username: args.username, password, source: '--username/--password-stdin' };
  }
  if (args.username) {
    throw new InputError('push: --username needs --password-stdin (a password on the command line would land in shell history)');
  }
  return dockerConfigCredentials(args.registry, env);
}

interface DockerConfig {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

/** The docker config's credentials for `registry`; undefined when it has none. */
export function dockerConfigCredentials(registry: string, env: NodeJS.ProcessEnv = process.env): Credentials | undefined {
  const file = join(env.DOCKER_CONFIG || join(env.HOME || homedir(), '.docker'), 'config.json');
  if (!existsSync(file)) {
    return undefined;
  }
  let config: DockerConfig;
  try {
    config = JSON.parse(readFileSync(file, 'utf8')) as DockerConfig;
  } catch (error) {
    throw new InputError(`push: ${file}: not JSON: ${(error as Error).message}`);
  }
  const helper = config.credHelpers?.[registry] ?? config.credsStore;
  const entry = Object.entries(config.auths ?? {}).find(([key]) => registryHost(key) === registry)?.[1];
  if (entry) {
    const source = `${file} auths["${registry}"]`;
    if (entry.identitytoken) {
      return { username: entry.username, identityToken: entry.identitytoken, source };
    }
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) {
        throw new InputError(`push: ${source}.auth: not base64 of user:password`);
      }
      return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), source };
    }
    if (entry.username && entry.password) {
      return { username: entry.username, password: entry.password, source };
    }
  }
  return helper ? helperCredentials(helper, registry, file) : undefined;
}

/** `https://host:port/v1/` and `host:port` name the same registry. */
function registryHost(key: string): string {
  return key.replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '');
}

function helperCredentials(helper: string, registry: string, file: string): Credentials | undefined {
  const program = `docker-credential-${helper}`;
  const result = spawnSync(program, ['get'], { input: registry, encoding: 'utf8' });
  if (result.error) {
    throw new InputError(`push: ${file} names credential helper ${helper}, but ${program} cannot run: ${(result.error as NodeJS.ErrnoException).code}`);
  }
  if (result.status !== 0) {
    // "credentials not found in native keychain": go anonymous, as docker does.
    return undefined;
  }
  const { Username, Secret } = JSON.parse(result.stdout) as { Username?: string; Secret?: string };
  const source = `${program}`;
  return Username === '<token>' ? { identityToken: Secret, source } : { username: Username, password: Secret, source };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One RFC 7235 challenge: scheme and its parameters. */
export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Parses a WWW-Authenticate header (quoted values may hold commas). */
export function parseChallenges(header: string): Challenge[] {
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  const token = /\s*([A-Za-z][A-Za-z0-9._~+/-]*)\s*(=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*)))?\s*,?/y;
  let at = 0;
  while (at < header.length) {
    token.lastIndex = at;
    const match = token.exec(header);
    if (!match || match[0] === '') {
      break;
    }
    at = token.lastIndex;
    const [, name, assignment, quoted, bare] = match;
    if (assignment === undefined) {
      challenges.push({ scheme: name!.toLowerCase(), params: {} });
    } else if (challenges.length > 0) {
      challenges.at(-1)!.params[name!.toLowerCase()] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare!;
    }
  }
  return challenges;
}

/** `repository:x:pull,push` and `repository:x:pull` are one scope: actions merge per resource. */
export function mergeScopes(scopes: readonly string[]): string[] {
  const byResource = new Map<string, Set<string>>();
  for (const scope of scopes) {
    const cut = scope.lastIndexOf(':');
    const resource = cut > 0 ? scope.slice(0, cut) : scope;
    const actions = byResource.get(resource) ?? new Set<string>();
    (cut > 0 ? scope.slice(cut + 1).split(',') : []).filter(Boolean).forEach((a) => actions.add(a));
    byResource.set(resource, actions);
  }
  return [...byResource].map(([resource, actions]) => (actions.size ? `${resource}:${[...actions].join(',')}` : resource));
}

/**
 * Answers a registry's challenges: remembers the Authorization that worked,
 * fetching (and caching per scope) bearer tokens as needed.
 */
export class RegistryAuth {
  private authorization?: string;
  private readonly tokens = new Map<string, string>();

  constructor(
    private readonly credentials: Credentials | undefined,
    /** The scope this client needs beyond what a challenge names, e.g. `repository:x:pull,push`. */
    private readonly scope: string,
  ) {}

  /** Whose credentials, for messages. */
  describe(): string {
    return this.credentials ? `the credentials from ${this.credentials.source}` : 'an anonymous request';
  }

  /** The Authorization header to send now, if any. */
  header(): Record<string, string> {
    return this.authorization ? { authorization: this.authorization } : {};
  }

  /** After a 401: sets up the Authorization its challenge asks for; throws when it cannot be answered. */
  async answer(response: Response, what: string): Promise<void> {
    const header = response.headers.get('www-authenticate') ?? '';
    const challenges = parseChallenges(header);
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    const basic = challenges.find((c) => c.scheme === 'basic');
    const who = this.credentials ? `the credentials from ${this.credentials.source}` : 'no credentials';
    if (bearer?.params.realm) {
      const scopes = mergeScopes([this.scope, ...(bearer.params.scope ?? '').split(' ').filter(Boolean)]);
      this.authorization = `Bearer ${await this.token(bearer.params.realm, bearer.params.service, scopes, what)}`;
      return;
    }
    if (basic) {
      if (!this.credentials?.username || this.credentials.password === undefined) {
        throw new InputError(
          `push: ${what}: the registry wants a user and password (Basic) and there are ${this.credentials ? 'none usable in ' + this.credentials.source : 'none'}: pass --username U --password-stdin, or docker login`,
        );
      }
      this.authorization = `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}`;
      return;
    }
    throw new InputError(`push: ${what}: HTTP 401 with no challenge this client answers (WWW-Authenticate: ${JSON.stringify(header)}; tried ${who})`);
  }

  /** A token from the realm: GET with Basic (or anonymous), or POST a refresh token (OAuth2). */
  private async token(realm: string, service: string | undefined, scopes: string[], what: string): Promise<string> {
    const key = `${realm} ${service} ${scopes.join(' ')}`;
    const cached = this.tokens.get(key);
    if (cached) {
      return cached;
    }
    const url = new URL(realm);
    let response: Response;
    try {
      if (this.credentials?.identityToken) {
        const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: this.credentials.identityToken, client_id: 'cozy-addresses' });
        if (service) form.set('service', service);
        form.set('scope', scopes.join(' '));
        response = await fetch(url, { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      } else {
        if (service) url.searchParams.set('service', service);
        for (const scope of scopes) url.searchParams.append('scope', scope);
        const headers: Record<string, string> = {};
        if (this.credentials?.username && this.credentials.password !== undefined) {
          url.searchParams.set('account', this.credentials.username);
          headers.authorization = `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}`;
        }
        response = await fetch(url, { headers });
      }
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      throw new InputError(`push: ${what}: token service ${realm}: ${cause?.code ?? (error as Error).message}`);
    }
    if (!response.ok) {
      const who = this.credentials ? `with the credentials from ${this.credentials.source}` : 'anonymously (no credentials: pass --username U --password-stdin, or docker login)';
      throw new InputError(`push: ${what}: token service ${realm} refused ${scopes.join(' ')} ${who}: HTTP ${response.status}`);
    }
    const body = (await response.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) {
      throw new InputError(`push: ${what}: token service ${realm} answered without a token`);
    }
    this.tokens.set(key, token);
    return token;
  }
}
