/**
 * Loopback ports for servers a test or a peer script starts on a port of its choosing (a child
 * process told its port, a peer restarted on the same port).
 */
import net from 'node:net';

/**
 * A loopback port nothing listens on right now, below the kernel's range of ephemeral ports
 * (32768–60999 by default). A port the kernel hands out for port 0 is one it may also give a
 * parallel test's outgoing connection as its source port before the caller listens on it (CI saw
 * EADDRINUSE that way); a server that can take port 0 itself should.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port between 20000 and 32000 in 50 tries');
}

/** Whether a server can listen on `port` of 127.0.0.1 now (it is closed again at once). */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
