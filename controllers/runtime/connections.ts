/**
 * One keep-alive connection pool per process for every client-node call.
 *
 * client-node 1.4.0 builds a fresh `https.Agent` for every request
 * (`applySecurityAuthentication` → `createAgent`), so each API call was a new
 * TCP connection and TLS handshake, on both sides. Here the KubeConfig hands
 * out one shared agent per distinct TLS identity instead: the CA, client
 * certificate and key, server name and verification setting it is given
 * each time (tokens travel in headers, so a rotated token needs no new
 * agent; a rotated client certificate gets a new agent and the old one is
 * closed). client-go does the same with one `http.Transport` per config.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type * as k8s from '@kubernetes/client-node';

/** What the connection metrics count; prom-client counters fit this shape. */
export interface ConnectionCounters {
  /** A new socket to the apiserver. */
  connectionOpened(): void;
  connectionClosed(): void;
  /** A completed TLS handshake (a full one or a resumed session). */
  handshake(): void;
}

export interface SharedAgentOptions {
  /** Sockets per apiserver endpoint; watches hold one each for their lifetime. @default 64 */
  readonly maxSockets?: number;
  readonly counters?: ConnectionCounters;
}

type AgentOptions = https.AgentOptions & http.AgentOptions;
type CreateAgent = (cluster: k8s.Cluster | null, agentOptions: AgentOptions) => http.Agent;

const MAX_IDENTITIES = 4;

/** The fields of agent options that make a connection a different TLS identity. */
const IDENTITY_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

function identityOf(server: string | undefined, options: AgentOptions): string {
  const parts: unknown[] = [server];
  for (const field of IDENTITY_FIELDS) {
    const value = options[field];
    parts.push(Buffer.isBuffer(value) ? value.toString('base64') : value);
  }
  return JSON.stringify(parts);
}

/**
 * Makes `kubeConfig` hand the same keep-alive agent to every API client and
 * watch built from it. Proxied clusters keep client-node's own agents.
 * Returns the kubeConfig for chaining.
 */
export function shareConnections(kubeConfig: k8s.KubeConfig, options: SharedAgentOptions = {}): k8s.KubeConfig {
  // createAgent is private in client-node's typings; it is the one place every request's agent comes from.
  const target = kubeConfig as unknown as { createAgent: CreateAgent };
  const original = target.createAgent.bind(kubeConfig);
  // API calls and watches may present slightly different options for one identity, so a few are kept.
  const agents = new Map<string, http.Agent>();
  target.createAgent = (cluster, agentOptions) => {
    if (cluster?.proxyUrl) {
      return original(cluster, agentOptions);
    }
    const identity = identityOf(cluster?.server, agentOptions);
    let agent = agents.get(identity);
    if (!agent) {
      agent = keepAliveAgent(cluster, agentOptions, options);
      agents.set(identity, agent);
      if (agents.size > MAX_IDENTITIES) {
        // The oldest identity, e.g. a client certificate since rotated: its sockets go.
        const [oldest, stale] = agents.entries().next().value!;
        agents.delete(oldest);
        stale.destroy();
      }
    }
    return agent;
  };
  return kubeConfig;
}

function keepAliveAgent(cluster: k8s.Cluster | null, agentOptions: AgentOptions, options: SharedAgentOptions): http.Agent {
  const settings: AgentOptions = {
    ...agentOptions,
    keepAlive: true,
    // client-node passes the request timeout here; on a shared agent it would also close idle watches.
    timeout: undefined,
    maxSockets: options.maxSockets ?? 64,
    maxFreeSockets: 16,
    scheduling: 'lifo',
  };
  const plain = cluster?.server?.startsWith('http:') ?? false;
  if (plain && !cluster?.skipTLSVerify) {
    // The same refusal as client-node's own createAgent.
    throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
  }
  const agent = plain ? new http.Agent(settings) : new https.Agent(settings);
  const counters = options.counters;
  if (counters) {
    // createConnection is per-agent; wrapping it sees every socket the pool opens.
    const instrumented = agent as unknown as { createConnection: (...args: unknown[]) => Socket };
    const create = instrumented.createConnection.bind(agent);
    instrumented.createConnection = (...args: unknown[]) => {
      const socket = create(...args);
      counters.connectionOpened();
      socket.once('close', () => counters.connectionClosed());
      if (!plain) {
        socket.once('secureConnect', () => counters.handshake());
      }
      return socket;
    };
  }
  return agent;
}
