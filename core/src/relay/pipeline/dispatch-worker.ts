/**
 * The dispatch thread (SERVICE_DISPATCH_THREAD): a worker thread that renders, sends and settles
 * deliveries, so the main event loop keeps only ingest and the HTTP API and the second core does
 * the sending. It owns the target plugin instances (loaded by the same loader, the same contract)
 * and a database connection of its own (SQLite: another connection to the same WAL file;
 * PostgreSQL: its own pool). The durable queue stays the hand-over: the main thread commits an
 * event and its deliveries, then posts the ids and what their sends need (an optimisation); this
 * thread claims, renews and settles rows exactly as the in-process dispatcher does, so should it
 * die, its rows' leases run out and the thread the main thread starts again claims them.
 *
 * What leaves the thread goes to the main thread as messages: log lines (already redacted here),
 * metric increments, self-monitoring signals (raised through the main thread's ingest), and the
 * "open" state that tells ingest whether to write deliveries already claimed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../../config/config.ts';
import type { Core } from '../../core.ts';
import { connectNativeSqlite } from '../../db/native-connect.ts';
import { echoTo } from '../../db/sql-echo.ts';
import { idleDelayFromEnv, MemoryReducer } from '../../health/memory-reducer.ts';
import type { LiveHint, LiveSink } from '../../live/hints.ts';
import { createLogger } from '../../logging/logger.ts';
import { SecretValues } from '../../logging/redact.ts';
import { createOutboundHttp } from '../../net/outbound.ts';
import { PluginHost } from '../../plugins/host.ts';
import { loadPlugins } from '../../plugins/loader.ts';
import { SecretsAtRest } from '../../secrets/at-rest.ts';
import { TemplateCatalog } from '../templates/catalog.ts';
import type { MetricDelta, ToMain, ToWorker } from './dispatch-worker-host.ts';
import { Dispatcher } from './dispatcher.ts';
import type { HandedDelivery } from './ingest.ts';
import { SelfMonitor } from './monitor.ts';

const port = parentPort!;
const data = workerData as { config: Config; version: string; offset: number; clock: BigInt64Array };
const config = data.config;
/**
 * The main thread's clock, which the main thread keeps current here (tests move it, or stop it at a
 * set time): its offset from the wall clock, or (second slot 1) the time it stands still at.
 */
const clock = {
  now: () =>
    new Date(
      Atomics.load(data.clock, 1) === 1n
        ? Number(Atomics.load(data.clock, 0))
        : Date.now() + Number(Atomics.load(data.clock, 0)),
    ),
};
const send = (m: ToMain) => port.postMessage(m);

const secrets = new SecretValues();
for (const s of [config.secretKey, config.previousSecretKey, config.messagingWebhookSecret, config.ai.apiKey])
  secrets.add(s);
// Lines are serialised and redacted here, and written by the main thread to its own destination.
const logs = createLogger({
  format: config.logFormat,
  level: config.debug ? 'debug' : config.logLevel,
  levels: config.logLevels,
  secrets,
  destination: {
    write(line: string) {
      send({ t: 'log', line });
      return true;
    },
  } as unknown as NodeJS.WritableStream,
});
const log = logs.get('relay');

/** Metric increments, sent to the main thread's registry in batches. */
let deltas: MetricDelta[] = [];
let commits = 0;
const flushMetrics = () => {
  if (!deltas.length && !commits) return;
  send({ t: 'metrics', deltas, commits });
  deltas = [];
  commits = 0;
};
const metricsTimer = setInterval(flushMetrics, 250);
const metrics = {
  dispatchDuration: {
    observe: (labels: Record<string, string>, value: number) => {
      deltas.push({ m: 'dispatchDuration', labels, value });
    },
  },
  sendFailures: {
    inc: (labels: Record<string, string>) => {
      deltas.push({ m: 'sendFailures', labels, value: 1 });
    },
  },
  eventLogTotal: {
    inc: (labels: Record<string, string>) => {
      deltas.push({ m: 'eventLogTotal', labels, value: 1 });
    },
  },
  pollFailures: {
    inc: (labels: Record<string, string>) => {
      deltas.push({ m: 'pollFailures', labels, value: 1 });
    },
  },
};

// On SQLite raw SQL through better-sqlite3 only (the relay never uses the ORM); open.ts, and with it
// MikroORM, is loaded for PostgreSQL only.
const db =
  config.dialect === 'sqlite'
    ? connectNativeSqlite(config.sqlitePath!, config.debug ? echoTo(logs.get('db')) : undefined)
    : await (await import('../../db/open.ts')).connectPostgres(config, logs.get('db'));
// The main thread's checkpointer counts commits: this connection's count too.
const native = (db as unknown as { native?: { onCommit?: () => void } }).native;
if (native)
  native.onCommit = () => {
    commits++;
  };
const plugins = await loadPlugins(config.plugins, { pluginDir: config.pluginDir });
const outbound = createOutboundHttp({ allowCidrs: config.outboundAllowCidrs, userAgent: `Herald/${data.version}` });
const atRest = new SecretsAtRest(config.secretKey, config.previousSecretKey);
const host = new PluginHost({
  plugins,
  db,
  logs,
  atRest,
  http: outbound,
  clock,
  isLeader: () => false,
  publicUrl: () => config.publicUrl ?? '',
});
const core = {
  config,
  version: data.version,
  logs,
  db,
  atRest,
  metrics,
  plugins: host,
  outbound,
  clock,
  services: new Map(),
  replicaId: `${process.pid}-dispatch`,
  lifecycle: 'running',
  onShutdown: () => {},
} as unknown as Core;
const catalog = new TemplateCatalog(plugins);
/** Self-monitoring signals are raised through the main thread's ingest; each resolves once its event is written. */
const emits = new Map<number, () => void>();
let nextEmit = 1;
const monitor = new SelfMonitor(
  core,
  (userId, signal, payload) =>
    new Promise<void>((resolve) => {
      const id = nextEmit++;
      emits.set(id, resolve);
      send({ t: 'emitSelf', id, userId, signal, payload });
    }),
);
// Live hints go to the main thread's bus, those of one turn in one message.
let hints: [string, LiveHint][] = [];
core.services.set('live', {
  publish(userId: string, hint: LiveHint) {
    if (hints.push([userId, hint]) === 1)
      setImmediate(() => {
        send({ t: 'live', hints });
        hints = [];
      });
  },
} satisfies LiveSink);
const dispatcher = new Dispatcher(core, catalog, monitor);
dispatcher.onOpen = (open) => send({ t: 'open', open });

let grace: AbortController | undefined;
let stopping: Promise<void> | undefined;

async function reply(id: number, fn: () => Promise<unknown>): Promise<void> {
  try {
    const value = await fn();
    send({ t: 'done', id, value });
  } catch (err) {
    send({ t: 'done', id, error: (err as Error)?.message ?? String(err) });
  }
}

// As on the main thread: once the thread has been idle a while, one collection gives back what boot and the last burst
// left committed.
const idleMs = idleDelayFromEnv();
const reducer = new MemoryReducer({ log: logs.get('memory'), idleMs, gc: idleMs === undefined ? null : undefined });

port.on('message', (m: ToWorker) => {
  reducer.noteActivity();
  switch (m.t) {
    case 'handed':
      dispatcher.accept(m.handed as HandedDelivery[]);
      break;
    case 'wake':
      dispatcher.wake();
      break;
    case 'tick':
      void reply(m.id, async () => {
        await dispatcher.tick();
        flushMetrics();
      });
      break;
    case 'release':
      void reply(m.id, async () => {
        const n = await dispatcher.releaseDue();
        flushMetrics();
        return n;
      });
      break;
    case 'abort':
      grace?.abort();
      break;
    case 'emitted':
      emits.get(m.id)?.();
      emits.delete(m.id);
      break;
    case 'stop':
      grace ??= new AbortController();
      if (m.now) grace.abort();
      stopping ??= (async () => {
        reducer.stop();
        await dispatcher.stop(grace!.signal);
        clearInterval(metricsTimer);
        flushMetrics();
        await host.stopAll(m.pluginsMs);
        await db.close();
      })();
      void reply(m.id, () => stopping!);
      break;
  }
});

dispatcher.start();
reducer.start();
log.debug({ plugins: plugins.map((p) => p.id) }, 'dispatch thread started');
send({ t: 'ready' });
