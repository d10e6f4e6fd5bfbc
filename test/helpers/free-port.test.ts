/**
 * scripts/peers/ports.ts: the port a test starts a server on later is one nothing listens on, and
 * below the kernel's ephemeral range, where no outgoing connection takes it in the meantime.
 */
import net from 'node:net';
import t from 'tap';
import { canListen, freePort } from '../../scripts/peers/ports.ts';

const listenOn = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });

/** Math.random answering `draws` in turn (then the last again), while `fn` runs. */
async function withDraws<T>(draws: number[], fn: () => Promise<T>): Promise<T> {
  const random = Math.random;
  let i = 0;
  Math.random = () => draws[Math.min(i++, draws.length - 1)]!;
  try {
    return await fn();
  } finally {
    Math.random = random;
  }
}
/** The draw that makes freePort try `port` (20000 + draw × 12000). */
const drawFor = (port: number) => (port - 20_000 + 0.5) / 12_000;

t.test('a port below the ephemeral range that a server can listen on', async (t) => {
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    t.ok(port >= 20_000 && port < 32_000, `${port} is below 32000`);
    const srv = await listenOn(port);
    await new Promise((r) => srv.close(r));
  }
});

t.test('a port something listens on is passed over', async (t) => {
  const taken = await listenOn(await freePort());
  t.teardown(() => taken.close());
  const busy = (taken.address() as net.AddressInfo).port;
  let other = busy + 1;
  while (other < 32_000 && !(await canListen(other))) other++;
  const port = await withDraws([drawFor(busy), drawFor(other)], freePort);
  t.equal(port, other, `${busy} is in use, so the next draw (${other}) is answered`);
  t.equal(await withDraws([drawFor(other)], freePort), other, 'a free port is answered at its first draw');
});

t.test('no free port in 50 draws: an error that says so', async (t) => {
  const taken = await listenOn(await freePort());
  t.teardown(() => taken.close());
  const busy = (taken.address() as net.AddressInfo).port;
  await t.rejects(withDraws([drawFor(busy)], freePort), /no free port between 20000 and 32000 in 50 tries/);
});
