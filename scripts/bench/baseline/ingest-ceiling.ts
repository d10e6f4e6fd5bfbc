/**
 * Baseline: the ingestion ceiling. A bare Fastify POST route that inserts each raw body into
 * SQLite (better-sqlite3, WAL, synchronous NORMAL like the service) and answers 202. Run as a child
 * process; prints its port on stdout. Args: <data dir> [--bare].
 *
 * `--bare`: the same route without the insert (bench:floor's inbound HTTP exchange alone).
 */
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import Fastify from 'fastify';

const dir = process.argv[2]!;
const bare = process.argv.includes('--bare');
const db = new Sqlite(path.join(dir, 'ceiling.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO events (received_at, body) VALUES (?, ?)');

const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/hook', async (req, reply) => {
  if (bare) return reply.code(202).send({ event_ids: [String((req.body as Buffer).length)] });
  const id = insert.run(new Date().toISOString(), (req.body as Buffer).toString('utf8')).lastInsertRowid;
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
