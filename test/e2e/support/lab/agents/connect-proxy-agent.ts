/**
 * Runs inside a lab node's namespace: an HTTP CONNECT proxy on a unix socket
 * in the shared filesystem. The apiserver, on the machine's own loopback,
 * reaches kubelets through it (its egress selector's `cluster` egress): a
 * CONNECT to <node address>:10250 is dialled from inside the node's namespace,
 * so `kubectl logs` works with no route between the two.
 *
 *   connect-proxy-agent.ts <unix socket path>
 */
import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { splice } from '../splice.js';

const [socketPath] = process.argv.slice(2);
if (!socketPath) {
  process.stderr.write('usage: connect-proxy-agent.ts <unix socket path>\n');
  process.exit(2);
}

function tunnel(inbound: Socket, head: Buffer): void {
  const text = head.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const request = /^CONNECT ([^\s:]+|\[[^\]]+\]):(\d+) HTTP\/1\.[01]\r\n/.exec(text);
  if (!request) {
    inbound.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    return;
  }
  const host = request[1]!.replace(/^\[|\]$/g, '');
  let connected = false;
  const outbound = connect(Number(request[2]), host, () => {
    connected = true;
    inbound.write('HTTP/1.1 200 Connection established\r\n\r\n');
    const rest = head.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
    if (rest.length) {
      outbound.write(rest);
    }
    splice(inbound, outbound);
  });
  // Until the tunnel is up: a target that cannot be reached is the client's 502, and a client gone is the dial's end.
  outbound.on('error', () => {
    if (!connected) {
      inbound.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    }
  });
  inbound.on('error', () => outbound.destroy());
  inbound.on('close', () => outbound.destroy());
}

rmSync(socketPath, { force: true });
const server = createServer((inbound) => {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    if (head.includes('\r\n\r\n')) {
      inbound.removeListener('data', onData);
      inbound.pause(); // resumed by pipe() once the tunnel is up
      tunnel(inbound, head);
    } else if (head.length > 8192) {
      inbound.destroy();
    }
  };
  inbound.on('data', onData);
  inbound.on('error', () => inbound.destroy());
});
server.listen(socketPath, () => process.stdout.write(`connect proxy listening on ${socketPath}\n`));
