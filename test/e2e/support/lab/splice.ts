/** Two sockets joined both ways (the lab's relays and proxies): either one closing or failing closes both. */
import type { Socket } from 'node:net';

export function splice(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const close = () => {
    a.destroy();
    b.destroy();
  };
  for (const s of [a, b]) {
    s.on('error', close);
    s.on('close', close);
  }
}
