/**
 * A broker that answers only what a test scripts, on the MQTT 3.1.1 wire format (OASIS MQTT
 * 3.1.1 §3.2): CONNACK with a chosen return code, or nothing at all; it never acknowledges a
 * PUBLISH. For the failures the real broker does not produce on demand (a CONNACK 4, a broker that
 * accepts the connection but never answers, a PUBACK that never comes).
 */
import net from 'node:net';

export interface ScriptedBroker {
  url: string;
  /** Control packet types received, in order (`CONNECT`, `PUBLISH`, `DISCONNECT`…). */
  received: string[];
  close(): Promise<void>;
}

const TYPES: Record<number, string> = { 1: 'CONNECT', 3: 'PUBLISH', 8: 'SUBSCRIBE', 12: 'PINGREQ', 14: 'DISCONNECT' };

/**
 * `connack`: the return code to answer CONNECT with (0 accepted, 4 bad user name or password…), or `null` to stay
 * silent.
 */
export async function startScriptedBroker(o: { connack: number | null }): Promise<ScriptedBroker> {
  const received: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      // Fixed header: type in the high nibble, then the remaining length as a variable byte integer.
      for (;;) {
        if (buf.length < 2) return;
        let length = 0;
        let multiplier = 1;
        let i = 1;
        for (;;) {
          if (i >= buf.length) return;
          const b = buf[i++]!;
          length += (b & 0x7f) * multiplier;
          multiplier *= 128;
          if ((b & 0x80) === 0) break;
        }
        if (buf.length < i + length) return;
        const type = buf[0]! >> 4;
        buf = buf.subarray(i + length);
        received.push(TYPES[type] ?? `type ${type}`);
        if (type === 1 && o.connack !== null) socket.write(Buffer.from([0x20, 0x02, 0x00, o.connack]));
        if (type === 1 && o.connack !== null && o.connack !== 0) socket.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    received,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
