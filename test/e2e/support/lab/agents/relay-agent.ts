/**
 * Runs inside a lab node's namespace: a TCP listener on that namespace's
 * loopback, each connection piped to a unix socket in the shared filesystem
 * (whose other end, in the machine's own namespace, reaches the apiserver).
 * So the node reaches the apiserver without any route out of its namespace.
 *
 *   relay-agent.ts <listen port> <unix socket path> [<listen address>, default 127.0.0.1]
 */
import { connect, createServer } from 'node:net';
import { splice } from '../splice.js';

const [portText, socketPath, host = '127.0.0.1'] = process.argv.slice(2);
const port = Number(portText);
if (!(port > 0) || !socketPath) {
  process.stderr.write('usage: relay-agent.ts <listen port> <unix socket path> [<listen address>]\n');
  process.exit(2);
}

const server = createServer((inbound) => splice(inbound, connect(socketPath)));
server.listen(port, host, () => process.stdout.write(`relay listening on ${host}:${port} -> ${socketPath}\n`));
