/**
 * Starts a real Herald service in-process on a loopback port with a fresh data directory, and
 * gives tests an HTTP client for it. Every test that needs the service uses this.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';

process.env.HERALD_BCRYPT_COST ??= '4';

const { loadConfig } = await import('../../core/src/config/config.ts');
const { createService } = await import('../../core/src/app.ts');
type Service = Awaited<ReturnType<typeof createService>>;

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: string | Buffer;
}

export interface TestService {
  url: string;
  service: Service;
  dataDir: string;
  admin: { token: string; id: string; email: string };
  /** Log lines the service wrote (JSON objects). */
  logs: () => any[];
  logText: () => string;
  request<T = any>(method: string, p: string, o?: RequestOptions): Promise<Response<T>>;
  /** Creates a user through the admin API (or directly when that route is absent) and logs in. */
  user(email?: string): Promise<{ token: string; id: string; email: string }>;
  clock: { now(): Date; set(d: Date | string): void; advance(ms: number): void; real(): void };
  stop(): Promise<void>;
}

export const TEST_PLUGINS = '@herald/provider-bridge-self,herald-plugin-example,herald-target-recorder';

/** The backend this test process runs against: `HERALD_TEST_DB=postgres` selects PostgreSQL, anything else SQLite. */
export const TEST_DB: 'sqlite' | 'postgresql' =
  process.env.HERALD_TEST_DB === 'postgres' || process.env.HERALD_TEST_DB === 'postgresql' ? 'postgresql' : 'sqlite';

interface Cluster {
  url(db?: string): string;
  createDatabase(): Promise<string>;
}

let cluster: Promise<Cluster> | undefined;

/**
 * The PostgreSQL cluster of this test run: the one named by `HERALD_TEST_PG_URL` (scripts/test.sh
 * starts one for the whole run), else one started for this process and stopped when it exits.
 */
export function pgCluster(): Promise<Cluster> {
  cluster ??= (async () => {
    const shared = process.env.HERALD_TEST_PG_URL;
    if (shared) {
      const pg = (await import('pg')).default;
      const url = (db = 'postgres') => {
        const u = new URL(shared);
        u.pathname = `/${db}`;
        return u.toString();
      };
      return {
        url,
        async createDatabase() {
          const name = `herald_test_${crypto.randomBytes(6).toString('hex')}`;
          const c = new pg.Client({ connectionString: url() });
          await c.connect();
          try {
            await c.query(`CREATE DATABASE ${name}`);
          } finally {
            await c.end();
          }
          return name;
        },
      };
    }
    // Loaded here, not with this module: a test on SQLite never loads the PostgreSQL client.
    const { startPostgres } = await import('../../scripts/peers/postgres.ts');
    const peer = await startPostgres();
    process.once('exit', () => peer.stopSync());
    for (const sig of ['SIGINT', 'SIGTERM'] as const)
      process.once(sig, () => {
        peer.stopSync();
        process.exit(1);
      });
    return peer;
  })();
  return cluster;
}

const databases = new Map<string, string>();

/** The migrations' source files, hashed: a template made from other migrations is never used. */
function migrationsDigest(): string {
  const dir = path.resolve(import.meta.dirname, '../../migrations');
  const h = crypto.createHash('sha256');
  for (const f of fs.readdirSync(dir).sort())
    h.update(f)
      .update('\0')
      .update(fs.readFileSync(path.join(dir, f)));
  return h.digest('hex').slice(0, 16);
}

/** Runs the service's own migrations on an empty database (the boot's openDatabase), with nothing logged. */
async function migrateEmpty(env: Record<string, string>): Promise<void> {
  const { openDatabase } = await import('../../core/src/db/open.ts');
  const { createLogger } = await import('../../core/src/logging/logger.ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-template-'));
  try {
    const config = loadConfig({ SERVICE_SECRET_KEY: testSecretKey(dir), SERVICE_DATA_DIR: dir, ...env });
    const log = createLogger({ format: 'json', level: 'fatal', destination: new PassThrough() }).root;
    const db = await openDatabase({ config, log });
    await db.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * A SQLite file the migrations ran on and nothing else, made once per test process (removed when it
 * exits). A service started without a data folder of the test's gets a copy, instead of running
 * every migration again; the boots that must find an empty or an older database name their folder.
 */
function migratedSqliteFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-template-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'herald.db');
    await migrateEmpty({ SERVICE_DATABASE_URL: `sqlite:${file}` });
    return file;
  })();
  return sqliteTemplate;
}

/**
 * Runs a statement that PostgreSQL refuses while another session is connected to the database it
 * renames or copies: again, for up to 5 s, while the sessions that just closed are still going away
 * (copies of the template run together from several test processes).
 */
async function whenUnused<T>(statement: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await statement();
    } catch (err) {
      if (i >= 50 || !/being accessed by other users/.test(String((err as Error).message))) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

let pgTemplate: Promise<string> | undefined;

/**
 * The PostgreSQL counterpart: a database of the cluster the migrations ran on, shared by every test
 * process of the run (made by the first under an advisory lock, named by the migrations' digest),
 * never connected to afterwards, so that CREATE DATABASE … TEMPLATE can copy it.
 */
function migratedPostgresTemplate(c: Cluster): Promise<string> {
  pgTemplate ??= (async () => {
    const pg = (await import('pg')).default;
    const name = `herald_template_${migrationsDigest()}`;
    const admin = new pg.Client({ connectionString: c.url() });
    await admin.connect();
    try {
      await admin.query('SELECT pg_advisory_lock(7226371901)');
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) {
        const work = await c.createDatabase();
        await migrateEmpty({ SERVICE_DATABASE_URL: c.url(work) });
        await whenUnused(() => admin.query(`ALTER DATABASE ${work} RENAME TO ${name}`));
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return pgTemplate;
}

/** A fresh database of the cluster copied from the migrated template. */
async function createMigratedDatabase(c: Cluster): Promise<string> {
  const template = await migratedPostgresTemplate(c);
  const pg = (await import('pg')).default;
  const name = `herald_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: c.url() });
  await admin.connect();
  try {
    await whenUnused(() => admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  } finally {
    await admin.end();
  }
  return name;
}

/**
 * A `SERVICE_DATABASE_URL` for a test: undefined on SQLite (the data folder's file), a fresh
 * PostgreSQL database otherwise. The same `key` (a data folder) gets the same database again, so a
 * restarted service finds its data.
 */
export async function testDatabaseUrl(key?: string): Promise<string | undefined> {
  if (TEST_DB === 'sqlite') return undefined;
  const c = await pgCluster();
  let name = key ? databases.get(key) : undefined;
  if (!name) {
    name = await c.createDatabase();
    if (key) databases.set(key, name);
  }
  return c.url(name);
}

/** A fresh PostgreSQL database whatever HERALD_TEST_DB says (tests of multi-replica behaviour). */
export async function postgresDatabaseUrl(): Promise<string> {
  const c = await pgCluster();
  return c.url(await c.createDatabase());
}

/**
 * Reads one row straight from the database of a stopped service (its SQLite file, or the
 * PostgreSQL database that data folder was given), with `?` placeholders on both backends.
 */
export async function readStoppedDatabase<T = Record<string, any>>(
  dataDir: string,
  sql: string,
  params: unknown[] = [],
): Promise<T | undefined> {
  if (TEST_DB === 'sqlite') {
    const { default: Sqlite } = await import('better-sqlite3');
    const db = new Sqlite(path.join(dataDir, 'herald.db'), { readonly: true });
    try {
      return db.prepare(sql).get(...params) as T | undefined;
    } finally {
      db.close();
    }
  }
  const name = databases.get(dataDir);
  if (!name) throw new Error(`no PostgreSQL database was created for ${dataDir}`);
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: (await pgCluster()).url(name) });
  await c.connect();
  let n = 0;
  try {
    return (
      await c.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows[0] as T | undefined;
  } finally {
    await c.end();
  }
}

const secretKeys = new Map<string, string>();

/**
 * The SERVICE_SECRET_KEY a test service gets unless the test names one: random, and the same again
 * for the same data folder, since a restarted service must open the secrets it sealed.
 */
export function testSecretKey(dataDir: string): string {
  let key = secretKeys.get(dataDir);
  if (!key) {
    key = crypto.randomBytes(32).toString('hex');
    secretKeys.set(dataDir, key);
  }
  return key;
}

export async function startService(
  env: Record<string, string> = {},
  o: {
    dataDir?: string;
    setup?: boolean;
    beforeStart?: (core: Service['core']) => Promise<void>;
    /** Called with the built service before it listens. */
    beforeListen?: (service: Service) => void;
    /** The service keeps its own wall clock, as in production: `clock` then moves nothing. */
    wallClock?: boolean;
  } = {},
): Promise<TestService> {
  const dataDir = o.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-'));
  // A folder made here is new and its service the first on it: it starts on a copy of the migrated
  // template (the migrations themselves run from an empty database wherever a test names the folder).
  if (!o.dataDir && env.SERVICE_DATABASE_URL === undefined) {
    if (TEST_DB === 'sqlite') fs.copyFileSync(await migratedSqliteFile(), path.join(dataDir, 'herald.db'));
    else databases.set(dataDir, await createMigratedDatabase(await pgCluster()));
  }
  const databaseUrl = env.SERVICE_DATABASE_URL ?? (await testDatabaseUrl(dataDir));
  const config = loadConfig({
    SERVICE_SECRET_KEY: testSecretKey(dataDir),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: '0',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    SERVICE_LOG_FORMAT: 'json',
    SERVICE_LOG_LEVEL: 'DEBUG',
    SERVICE_PLUGINS: TEST_PLUGINS,
    SERVICE_GRACEFUL_SHUTDOWN_SECONDS: '5',
    ...(databaseUrl ? { SERVICE_DATABASE_URL: databaseUrl } : {}),
    // The suite runs with dispatch in its own thread or in the main one as the environment says.
    ...(process.env.SERVICE_DISPATCH_THREAD ? { SERVICE_DISPATCH_THREAD: process.env.SERVICE_DISPATCH_THREAD } : {}),
    ...env,
  });
  let fake: number | undefined;
  const clock = {
    now: () => (fake === undefined ? new Date() : new Date(fake)),
    set: (d: Date | string) => {
      fake = new Date(d).getTime();
    },
    advance: (ms: number) => {
      fake = (fake ?? Date.now()) + ms;
    },
    real: () => {
      fake = undefined;
    },
  };
  const lines: string[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n').filter(Boolean)));
  const service = await createService(config, {
    logDestination: sink,
    clock: o.wallClock ? undefined : clock,
    beforeStart: o.beforeStart,
  });
  o.beforeListen?.(service);
  const url = await service.listen();
  const request = async <T = any>(method: string, p: string, ro: RequestOptions = {}): Promise<Response<T>> => {
    const headers: Record<string, string> = { ...(ro.headers ?? {}) };
    if (ro.token) headers.authorization = `Bearer ${ro.token}`;
    let body: string | Buffer | undefined;
    if (ro.raw !== undefined) body = ro.raw;
    else if (ro.body !== undefined) {
      body = JSON.stringify(ro.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + p, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  let admin = { token: '', id: '', email: 'admin@example.test' };
  if (o.setup !== false) {
    const r = await request('POST', '/api/setup', { body: { email: admin.email, password: 'correct horse battery' } });
    if (r.status !== 201) throw new Error(`setup failed: ${r.status} ${r.text}`);
    admin = { token: r.body.access_token, id: r.body.user.id, email: admin.email };
  }
  let n = 0;
  return {
    url,
    service,
    dataDir,
    admin,
    clock,
    request,
    logs: () =>
      lines.map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return { raw: l };
        }
      }),
    logText: () => lines.join('\n'),
    async user(email = `user${++n}-${crypto.randomBytes(3).toString('hex')}@example.test`) {
      const { createUser } = await import('../../core/src/users/users.ts');
      const { selfMonitoringOf } = await import('../../core/src/plugins/self-monitoring.ts');
      const row = await createUser(
        service.core.db,
        { email, password: 'user password 1', max_chats: 20 },
        selfMonitoringOf(service.core),
      );
      const r = await request('POST', '/api/auth/login', { body: { email, password: 'user password 1' } });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
      return { token: r.body.access_token, id: row.id, email };
    },
    async stop() {
      // A stop that does not end within a minute prints the service's last log lines (each shutdown step logs when it
      // is done), so that the test's timeout in a CI log says where it waits.
      const slow = setTimeout(() => {
        const steps = lines.filter((l) => l.includes('shut'));
        const shown = [...steps, '…', ...lines.slice(-20)].join('\n');
        process.stderr.write(
          `service stop still waiting after 60 s; its shutdown lines, then its last 20:\n${shown}\n`,
        );
      }, 60_000);
      slow.unref();
      await service.stop().finally(() => clearTimeout(slow));
      if (!o.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The clear value of a secret read straight from the database, which must hold it sealed
 * (`enc:v1:`); throws when it is stored in clear.
 */
export function unsealed(s: TestService, stored: unknown): string {
  if (typeof stored !== 'string' || !stored.startsWith('enc:v1:'))
    throw new Error(
      'expected a sealed value in the database, found ' +
        `${typeof stored === 'string' ? `"${stored.slice(0, 8)}…"` : String(stored)}`,
    );
  return s.service.core.atRest.open(stored);
}

/** A loopback HTTP server that records what it receives and answers as told. */
export async function startSink(): Promise<{
  url: string;
  received: any[];
  respond: (status: number, headers?: Record<string, string>) => void;
  close(): Promise<void>;
  /**
   * What it has received once it holds `n` requests, or after `ms` (15 s, as test/helpers/wait.ts waits) with fewer:
   * the caller's assertions on the count then say what is missing. Every caller waits for requests it expects, so a
   * long wait costs only a failing run.
   */
  waitFor(n: number, ms?: number): Promise<any[]>;
}> {
  const http = await import('node:http');
  let status = 200;
  let headers: Record<string, string> = {};
  const received: any[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep text */
      }
      if (status < 300) received.push({ body, headers: req.headers, at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(status < 300 ? `ok-${received.length}` : 'nope');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    received,
    respond: (s, h = {}) => {
      status = s;
      headers = h;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
    async waitFor(n, ms = 15_000) {
      const end = Date.now() + ms;
      while (received.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      return received;
    },
  };
}

/**
 * A GitHub webhook's headers for the body `raw`, signed with `secret` as GitHub signs (HMAC-SHA256 of the bytes); with
 * `raw` null, no signature header.
 */
export function githubHookHeaders(
  secret: string,
  raw: string | Buffer | null,
  event = 'push',
  delivery: string = crypto.randomUUID(),
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': delivery,
    ...(raw === null
      ? {}
      : { 'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}` }),
  };
}

/** The example plugins' header that carries the shared token of {@link exampleChain}'s provider. */
export const EXAMPLE_HOOK_HEADERS = { 'x-example-token': 'sharedtoken1' };

/** The target {@link exampleChain} links, when not its recorder. */
export interface ExampleTarget {
  kind: string;
  name: string;
  config: Record<string, unknown>;
  locale?: string;
}

/**
 * The smallest relay chain, made through the API: an example provider, a tracker of it, a target (a recorder posting
 * to `target` when that is a URL) and their link, as `token`'s user (the admin by default); `hook` is the provider's
 * webhook path. A step the API refuses throws, naming its answer.
 */
export async function exampleChain(s: TestService, target: string | ExampleTarget, token = s.admin.token) {
  const made = async (step: string, method: string, url: string, body?: unknown) => {
    const r = await s.request(method, url, { token, ...(body === undefined ? {} : { body }) });
    if (r.status >= 300) throw new Error(`${step}: ${r.status} ${r.text}`);
    return r.body;
  };
  const p = await made('provider', 'POST', '/api/providers', {
    kind: 'example',
    name: 'Ex',
    config: { shared_token: 'sharedtoken1' },
  });
  const tr = await made('tracker', 'POST', '/api/trackers', { provider_id: p.id, name: 'Tr' });
  const tg = await made(
    'target',
    'POST',
    '/api/targets',
    typeof target === 'string'
      ? { kind: 'recorder', name: 'Rec', config: { url: target }, locale: 'en' }
      : { locale: 'en', ...target },
  );
  await made('link', 'PUT', `/api/trackers/${tr.id}/targets/${tg.id}`);
  return { provider: p, tracker: tr, target: tg, hook: `/api/hooks/${p.webhook_url.split('/api/hooks/')[1]}` };
}
