/**
 * Baseline: the ingestion ceiling. A bare Fastify POST route that inserts each raw body into
 * SQLite (better-sqlite3, WAL, synchronous NORMAL like the service) and answers 202. Run as a child
 * process; prints its port on stdout. Args: <data dir> [--bare] [--relay <sink url>].
 *
 * `--bare`: the same route without the insert (bench:floor's inbound HTTP exchange alone).
 * `--relay <sink url>`: after answering, the process also posts each request's chat message to the sink through the
 * service's own outbound client, 16 at a time, as baseline/outbound-client.ts does in a process of its own
 * (bench:floor's two exchanges in one process).
 */
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import Fastify from 'fastify';
import { createOutboundHttp } from '../../../core/src/net/outbound.ts';
import { sendChatMessage } from '../lib/chat-send.ts';

const dir = process.argv[2]!;
const bare = process.argv.includes('--bare');
const relayAt = process.argv.indexOf('--relay');
const sinkUrl = relayAt > 0 ? process.argv[relayAt + 1] : undefined;
const db = new Sqlite(path.join(dir, 'ceiling.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO events (received_at, body) VALUES (?, ?)');

/** The outbound half of `--relay`: what the relay sends for a delivery, in order, at most 16 in flight. */
function relayer(url: string): (body: Buffer) => void {
  const http = createOutboundHttp({ allowCidrs: ['127.0.0.0/8'], userAgent: 'Herald/bench' });
  const queue: string[] = [];
  let active = 0;
  const pump = () => {
    while (active < 16 && queue.length) {
      const id = queue.shift()!;
      active++;
      void sendChatMessage(http, url, id).finally(() => {
        active--;
        pump();
      });
    }
  };
  return (body) => {
    // The bench id the sink counts arrivals by; the floor parses nothing, so a match on the text stands for it.
    const id = /benchid(\d+)x/.exec(body.toString('latin1'))?.[1];
    if (id === undefined) return;
    queue.push(id);
    pump();
  };
}
const relay = sinkUrl ? relayer(sinkUrl) : undefined;

const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/hook', async (req, reply) => {
  const body = req.body as Buffer;
  if (relay) reply.raw.once('finish', () => relay(body));
  if (bare) return reply.code(202).send({ event_ids: [String(body.length)] });
  const id = insert.run(new Date().toISOString(), body.toString('utf8')).lastInsertRowid;
  return reply.code(202).send({ event_ids: [String(id)] });
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${(app.server.address() as { port: number }).port}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
});
