/** The probe (/healthz, /readyz) and metrics (/metrics) endpoints. */
import { createServer, type Server } from 'node:http';
import type { ControllerMetrics } from './metrics.js';

/** Parses `:8081`, `127.0.0.1:8081` or `0` (disabled). */
export function parseBindAddress(flag: string, value: string): { host: string; port: number } | undefined {
  if (value === '0' || value === ':0' || value === '') {
    return undefined;
  }
  const match = /^(.*):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65535) {
    throw new Error(`--${flag}: ${JSON.stringify(value)} is not [host]:port or 0`);
  }
  return { host: match[1] || '0.0.0.0', port };
}

function listen(server: Server, address: { host: string; port: number }): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve(server));
  });
}

export function serveProbes(address: { host: string; port: number }, ready: () => boolean): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200).end('ok');
    } else if (req.url === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503).end(ok ? 'ok' : 'caches not synced');
    } else {
      res.writeHead(404).end();
    }
  });
  return listen(server, address);
}

export function serveMetrics(address: { host: string; port: number }, metrics: ControllerMetrics): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (error: Error) => res.writeHead(500).end(error.message),
    );
  });
  return listen(server, address);
}

export function close(server: Server | undefined): Promise<void> {
  return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
}
