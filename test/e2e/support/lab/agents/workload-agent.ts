/**
 * A lab workload: an HTTP server in its own namespace on the pod segment that
 * answers every request with its identity and the peer it saw (the node that
 * forwarded the connection, after kube-proxy's masquerade), so the client can
 * tell who answered and through which node.
 *
 *   workload-agent.ts <name> <port>
 */
import { createServer } from 'node:http';

const [name, portText] = process.argv.slice(2);
const port = Number(portText);
if (!name || !(port > 0)) {
  process.stderr.write('usage: workload-agent.ts <name> <port>\n');
  process.exit(2);
}

const server = createServer((request, response) => {
  const body = JSON.stringify({ workload: name, peer: request.socket.remoteAddress });
  response.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
  response.end(body);
});
server.keepAliveTimeout = 0;
// '::' takes IPv4 too (as v4-mapped peers).
server.listen(port, '::', () => process.stdout.write(`workload ${name} listening on [::]:${port}\n`));
