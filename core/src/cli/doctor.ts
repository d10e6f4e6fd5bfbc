/**
 * `herald doctor`: one line per check, ✓ passed, ! worth a look, ✗ failed (with what to do), - not
 * applicable here; exit code 1 when any check failed. The database is never migrated or written, no
 * plugin instance is started, no request is sent beyond a TCP connection (and the SMTP listener's
 * greeting); loading the plugins links the plugin directory's contract as every start does.
 *
 * Configuration (the SERVICE_* variables as the service reads them, CORS, the data folder writable),
 * the database (reachable, integrity, migrations, WAL or size), the secret key against the database's
 * key check and sealed values, each plugin of SERVICE_PLUGINS (loads, no clash), each provider and
 * target (its plugin, secrets that open, configuration valid, its last error), the outbound
 * reachability of the server each names as the plugins' client sees it (the address policy with the
 * service's and the instance's allow lists, DNS, then TCP to the checked address), the SMTP listener,
 * and the Debian packages this configuration uses.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { reportFont } from '../assistant/report-pdf.ts';
import { type Config, ConfigurationError } from '../config/config.ts';
import { type Database, Database as Db } from '../db/database.ts';
import { onPath } from '../db/pg-snapshot.ts';
import { bindCredentials, createOutboundHttp, OutboundError } from '../net/outbound.ts';
import { OUTBOUND_DNS, OUTBOUND_REFUSED } from '../plugin-api/index.ts';
import { outboundAllowOf } from '../plugins/host.ts';
import { type LoadedPlugin, loadPlugins, PluginLoadError } from '../plugins/loader.ts';
import { findSelfMonitoringReceiver } from '../plugins/self-monitoring.ts';
import type { ProviderDbRow } from '../relay/definitions/provider.ts';
import type { TargetDbRow } from '../relay/definitions/target.ts';
import { SecretsAtRest } from '../secrets/at-rest.ts';
import { cliConfig, cliLogs, databaseLabel, openCliDatabase, VERSION } from './context.ts';
import type { Messages, Params } from './i18n.ts';
import { CliError, EXIT, out, printJson } from './output.ts';
import { keyState, unreadableSecrets } from './secret-key.ts';

export type Status = 'ok' | 'warn' | 'fail' | 'skip';
export interface Check {
  group: string;
  id: string;
  status: Status;
  message: string;
  fix?: string;
}

const MARK: Record<Status, string> = { ok: '✓', warn: '!', fail: '✗', skip: '-' };
/** A WAL larger than this means checkpoints are held back (the service keeps it to a few MB). */
const WAL_WARN_BYTES = 64 * 1024 * 1024;
const TCP_TIMEOUT_MS = 3000;
const DNS_TIMEOUT_MS = 3000;
const OUTBOUND_PARALLEL = 8;
/** Failing instances named one per line, up to this many per table. */
const LIST_MAX = 50;

class Report {
  readonly checks: Check[] = [];
  private m: Messages;
  constructor(m: Messages) {
    this.m = m;
  }

  add(
    group: string,
    id: string,
    status: Status,
    key: string,
    params?: Params,
    fixKey?: string,
    fixParams?: Params,
  ): void {
    this.checks.push({
      group,
      id,
      status,
      message: this.m.t(key, params),
      ...(fixKey ? { fix: this.m.t(fixKey, fixParams ?? params) } : {}),
    });
  }

  get failed(): boolean {
    return this.checks.some((c) => c.status === 'fail');
  }
}

function checkCors(r: Report, config: Config): void {
  const plain = config.corsOrigins.filter((o) => {
    const u = new URL(o);
    return u.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  });
  if (!config.corsOrigins.length) r.add('config', 'cors', 'ok', 'doctor.cors_none');
  else if (plain.length)
    r.add('config', 'cors', 'warn', 'doctor.cors_plain_http', { origins: plain }, 'doctor.cors_plain_http_fix');
  else r.add('config', 'cors', 'ok', 'doctor.cors_ok', { origins: config.corsOrigins });
}

function checkDataDir(r: Report, config: Config): void {
  const dir = config.dataDir;
  if (!fs.existsSync(dir)) {
    // The service makes it at its first start: whether it can depends on the nearest folder that exists.
    let parent = path.dirname(dir);
    while (!fs.existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
    try {
      fs.accessSync(parent, fs.constants.W_OK);
      r.add('config', 'data_dir', 'warn', 'doctor.data_dir_missing', { dir });
    } catch {
      r.add('config', 'data_dir', 'fail', 'doctor.data_dir_not_creatable', { dir, parent }, 'doctor.data_dir_fix', {
        dir,
        user: os.userInfo().username,
      });
    }
    return;
  }
  const probe = path.join(dir, `.herald-doctor-${process.pid}`);
  try {
    fs.writeFileSync(probe, 'x', { mode: 0o600 });
    fs.rmSync(probe);
    r.add('config', 'data_dir', 'ok', 'doctor.data_dir_ok', { dir });
  } catch (err) {
    r.add(
      'config',
      'data_dir',
      'fail',
      'doctor.data_dir_not_writable',
      { dir, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message },
      'doctor.data_dir_fix',
      { dir, user: os.userInfo().username },
    );
  }
}

/** Each plugin on its own (one broken plugin does not hide the others), then all of them together (clashes). */
async function checkPlugins(r: Report, config: Config): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  const specs: string[] = [];
  for (const spec of config.plugins) {
    try {
      const [p] = await loadPlugins([spec], { pluginDir: config.pluginDir });
      loaded.push(p!);
      specs.push(spec);
      r.add('plugins', `plugin:${spec}`, 'ok', 'doctor.plugin_ok', { name: p!.packageName, kind: p!.kind, id: p!.id });
      // What the plugin validator finds without refusing the load (the service logs it at each start).
      for (const w of p!.warnings ?? [])
        r.add('plugins', `plugin:${spec}:${w.code}:${w.path}`, 'warn', 'doctor.plugin_warning', {
          name: p!.packageName,
          message: w.message,
        });
    } catch (err) {
      if (!(err instanceof PluginLoadError)) throw err;
      r.add('plugins', `plugin:${spec}`, 'fail', 'doctor.plugin_failed', { reason: err.message });
    }
  }
  try {
    await loadPlugins(specs, { pluginDir: config.pluginDir });
    findSelfMonitoringReceiver(loaded);
  } catch (err) {
    if (!(err instanceof PluginLoadError)) throw err;
    r.add('plugins', 'plugins:together', 'fail', 'doctor.plugins_clash', { reason: err.message });
  }
  return loaded;
}

interface DbState {
  db: Database;
  migrated: boolean;
}

async function checkDatabase(r: Report, config: Config, m: Messages): Promise<DbState | undefined> {
  const where = databaseLabel(config);
  if (config.dialect === 'sqlite' && !fs.existsSync(config.sqlitePath!)) {
    r.add('database', 'database', 'warn', 'doctor.db_missing', { where });
    return undefined;
  }
  let opened;
  try {
    opened = await openCliDatabase(config, cliLogs(config), 'inspect');
  } catch (err) {
    const reason = err instanceof CliError ? m.t(err.key, err.params) : (err as Error).message;
    r.add('database', 'database', 'fail', 'doctor.db_unreachable', { where, reason }, 'doctor.db_unreachable_fix');
    return undefined;
  }
  const { db, pending } = opened;
  r.add('database', 'database', 'ok', 'doctor.db_ok', {
    where,
    dialect: config.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL',
  });
  if (config.dialect === 'sqlite') {
    const rows = await db.all<Record<string, string>>('PRAGMA integrity_check');
    const problems = rows.map((x) => Object.values(x)[0]).filter((x) => x !== 'ok');
    if (problems.length)
      r.add(
        'database',
        'integrity',
        'fail',
        'doctor.integrity_bad',
        { problems: problems.slice(0, 5) },
        'doctor.integrity_fix',
        { dir: path.join(config.dataDir, 'snapshots') },
      );
    else r.add('database', 'integrity', 'ok', 'doctor.integrity_ok');
  } else {
    const invalid = await db.all<{ name: string }>(
      'SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT ' +
        'i.indisvalid ORDER BY 1',
    );
    if (invalid.length)
      r.add(
        'database',
        'integrity',
        'fail',
        'doctor.pg_indexes_invalid',
        { names: invalid.map((x) => x.name) },
        'doctor.pg_indexes_fix',
      );
    else r.add('database', 'integrity', 'ok', 'doctor.pg_indexes_ok');
  }
  if (pending.length)
    r.add(
      'database',
      'migrations',
      'fail',
      'doctor.migrations_pending',
      { count: pending.length, ids: pending },
      'doctor.migrations_fix',
    );
  else r.add('database', 'migrations', 'ok', 'doctor.migrations_ok', { version: VERSION });
  if (config.dialect === 'sqlite') {
    let size = 0;
    try {
      size = fs.statSync(`${config.sqlitePath}-wal`).size;
    } catch {
      /* no WAL: nothing written since the last checkpoint */
    }
    if (size > WAL_WARN_BYTES)
      r.add('database', 'wal', 'warn', 'doctor.wal_large', { size: m.bytes(size) }, 'doctor.wal_large_fix');
    else r.add('database', 'wal', 'ok', 'doctor.wal_ok', { size: m.bytes(size) });
  } else {
    const size = Number((await db.get<{ n: unknown }>('SELECT pg_database_size(current_database()) AS n'))?.n ?? 0);
    r.add('database', 'size', 'ok', 'doctor.pg_size', { size: m.bytes(size) });
  }
  return { db, migrated: pending.length === 0 };
}

async function checkSecrets(r: Report, config: Config, state: DbState): Promise<boolean> {
  const atRest = new SecretsAtRest(config.secretKey, config.previousSecretKey);
  const key = await keyState(state.db, atRest);
  if (key === 'wrong') {
    r.add('secrets', 'secret_key', 'fail', 'doctor.key_wrong', undefined, 'doctor.key_wrong_fix');
    return false;
  }
  if (key === 'current') r.add('secrets', 'secret_key', 'ok', 'doctor.key_ok');
  else if (key === 'previous')
    r.add('secrets', 'secret_key', 'warn', 'doctor.key_previous', undefined, 'doctor.key_previous_fix');
  else r.add('secrets', 'secret_key', 'warn', 'doctor.key_missing');
  if (!state.migrated) return true;
  const unreadable = await unreadableSecrets(state.db, atRest);
  if (unreadable.length)
    r.add(
      'secrets',
      'sealed_values',
      'fail',
      'doctor.secrets_unreadable',
      { count: unreadable.length, records: unreadable.slice(0, 10) },
      'doctor.secrets_unreadable_fix',
    );
  else r.add('secrets', 'sealed_values', 'ok', 'doctor.secrets_ok');
  return true;
}

interface Instance {
  table: 'provider' | 'target';
  id: string;
  kind: string;
  name: string;
  owner: string;
  enabled: boolean;
  config: Record<string, unknown>;
  allow: string[];
  plugin?: LoadedPlugin;
  status?: string;
  statusDetail?: string | null;
  failures?: number;
  lastError?: string | null;
}

async function readInstances(db: Database, plugins: LoadedPlugin[]): Promise<Instance[]> {
  const byKey = new Map(plugins.map((p) => [`${p.kind}:${p.id}`, p]));
  const providers = await db.all<ProviderDbRow & { owner: string }>(
    `SELECT p.*, u.email AS owner FROM providers p JOIN users u ON u.id = p.user_id ORDER BY u.email, p.name, p.id`,
  );
  const targets = await db.all<TargetDbRow & { owner: string }>(
    `SELECT t.*, u.email AS owner FROM targets t JOIN users u ON u.id = t.user_id ORDER BY u.email, t.name, t.id`,
  );
  const common = (table: 'provider' | 'target', row: (ProviderDbRow | TargetDbRow) & { owner: string }): Instance => ({
    table,
    id: row.id,
    kind: row.kind,
    name: row.name,
    owner: row.owner,
    enabled: Db.bool(row.enabled),
    config: Db.json<Record<string, unknown>>(row.config, {}),
    allow: outboundAllowOf(row.outbound_allow),
    plugin: byKey.get(`${table}:${row.kind}`),
  });
  return [
    ...providers.map((row) => ({ ...common('provider', row), status: row.status, statusDetail: row.status_detail })),
    ...targets.map((row) => ({
      ...common('target', row),
      failures: Number(row.consecutive_failures ?? 0),
      lastError: row.last_error,
    })),
  ];
}

const label = (m: Messages, i: Instance): string =>
  m.t(`doctor.${i.table}_label`, { name: i.name, kind: i.kind, owner: i.owner });

function checkInstances(r: Report, m: Messages, instances: Instance[], atRest: SecretsAtRest): void {
  let problems = 0;
  let checked = 0;
  for (const i of instances) {
    if (!i.enabled) continue;
    checked++;
    const id = `${i.table}:${i.id}`;
    const fail = (key: string, params: Params, fixKey?: string) => {
      problems++;
      if (problems <= LIST_MAX) r.add('instances', id, 'fail', key, { what: label(m, i), ...params }, fixKey);
    };
    if (!i.plugin) {
      r.add(
        'instances',
        id,
        'warn',
        'doctor.instance_no_plugin',
        { what: label(m, i), kind: i.kind },
        'doctor.instance_no_plugin_fix',
        { kind: i.kind },
      );
      continue;
    }
    let opened: Record<string, unknown>;
    try {
      opened = atRest.openConfig(i.config, i.plugin.secretPaths, 'a secret of this record');
    } catch (err) {
      fail('doctor.instance_secret', { reason: (err as Error).message }, 'doctor.instance_secret_fix');
      continue;
    }
    const valid = i.plugin.validateConfig(opened, { undeclared: 'drop' });
    const issues = valid.ok ? i.plugin.checkConfig(valid.value) : valid.errors;
    if (issues.length) {
      fail(
        'doctor.instance_invalid',
        {
          reason: issues
            .slice(0, 5)
            .map((e) => `${e.path} ${e.message}`)
            .join('; '),
        },
        'doctor.instance_invalid_fix',
      );
      continue;
    }
    if (i.table === 'provider' && (i.status === 'error' || i.status === 'auth_failed'))
      fail('doctor.instance_status', { status: i.status, reason: i.statusDetail ?? '' }, 'doctor.instance_status_fix');
    else if (i.table === 'target' && (i.failures ?? 0) > 0 && i.lastError)
      fail('doctor.instance_failing', { count: i.failures!, reason: i.lastError }, 'doctor.instance_status_fix');
  }
  if (problems > LIST_MAX)
    r.add('instances', 'instances:more', 'fail', 'doctor.instances_more', { count: problems - LIST_MAX });
  const providers = instances.filter((i) => i.table === 'provider').length;
  const targets = instances.length - providers;
  r.add('instances', 'instances', problems ? 'fail' : 'ok', problems ? 'doctor.instances_bad' : 'doctor.instances_ok', {
    providers,
    targets,
    checked,
    problems,
  });
}

const DEFAULT_PORTS: Record<string, number> = {
  'http:': 80,
  'https:': 443,
  'ws:': 80,
  'wss:': 443,
  'mqtt:': 1883,
  'mqtts:': 8883,
  'smtp:': 25,
  'smtps:': 465,
};

/** The host and port an address from `configAddress` names (the port may be unknown for a bare host). */
function hostPort(address: string): { host: string; port?: number } | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) {
    try {
      const u = new URL(address);
      const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
      return { host, port: u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol] };
    } catch {
      return undefined;
    }
  }
  const withPort = /^(.+):(\d{1,5})$/.exec(address);
  if (withPort && !net.isIPv6(address))
    return { host: withPort[1]!.replace(/^\[(.*)\]$/, '$1'), port: Number(withPort[2]) };
  return { host: address.replace(/^\[(.*)\]$/, '$1') };
}

function tcpConnect(address: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port, timeout: TCP_TIMEOUT_MS });
    const end = (why?: string) => {
      socket.destroy();
      resolve(why);
    };
    socket.once('connect', () => end());
    socket.once('timeout', () => end('ETIMEDOUT'));
    socket.once('error', (err: NodeJS.ErrnoException) => end(err.code ?? err.message));
  });
}

async function parallel<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function checkOutbound(r: Report, m: Messages, config: Config, instances: Instance[]): Promise<void> {
  const { configAddress } = await import('../relay/routes/admin-outbound.ts');
  // One check per server and allow list, however many instances name it.
  const groups = new Map<string, { host: string; port?: number; allow: string[]; who: string[] }>();
  for (const i of instances) {
    if (!i.enabled || !i.plugin) continue;
    const address = configAddress(i.config, i.plugin.secretPaths);
    const hp = address ? hostPort(address) : undefined;
    if (!hp) continue;
    const key = JSON.stringify([hp.host.toLowerCase(), hp.port ?? null, [...i.allow].sort()]);
    const g = groups.get(key) ?? { ...hp, allow: i.allow, who: [] };
    g.who.push(label(m, i));
    groups.set(key, g);
  }
  if (!groups.size) {
    r.add('outbound', 'outbound', 'skip', 'doctor.outbound_none');
    return;
  }
  const client = createOutboundHttp({
    allowCidrs: config.outboundAllowCidrs,
    defaults: { connectTimeoutMs: DNS_TIMEOUT_MS },
  });
  // Checked in parallel, reported in a stable order.
  const local = new Report(m);
  try {
    await parallel([...groups.values()], OUTBOUND_PARALLEL, async (g) => {
      const server = g.port ? `${g.host.includes(':') ? `[${g.host}]` : g.host}:${g.port}` : g.host;
      const params = {
        server,
        who: g.who.slice(0, 3).join(', ') + (g.who.length > 3 ? ` (+${g.who.length - 3})` : ''),
      };
      const id = `outbound:${server}${g.allow.length ? `:${g.allow.join(',')}` : ''}`;
      let address: string;
      try {
        ({ address } = await bindCredentials(client, { headers: [], secrets: [] }, g.allow).resolveAllowed(g.host));
      } catch (err) {
        const code = err instanceof OutboundError ? err.code : '';
        if (code === OUTBOUND_REFUSED)
          local.add(
            'outbound',
            id,
            'fail',
            'doctor.outbound_refused',
            { ...params, reason: (err as Error).message },
            'doctor.outbound_refused_fix',
          );
        else if (code === OUTBOUND_DNS)
          local.add(
            'outbound',
            id,
            'fail',
            'doctor.outbound_dns',
            { ...params, reason: (err as Error).message },
            'doctor.outbound_dns_fix',
          );
        else local.add('outbound', id, 'fail', 'doctor.outbound_error', { ...params, reason: (err as Error).message });
        return;
      }
      if (!g.port) {
        local.add('outbound', id, 'ok', 'doctor.outbound_resolved', { ...params, address });
        return;
      }
      const why = await tcpConnect(address, g.port);
      if (why)
        local.add(
          'outbound',
          id,
          'fail',
          'doctor.outbound_tcp',
          { ...params, address, reason: why },
          'doctor.outbound_tcp_fix',
        );
      else local.add('outbound', id, 'ok', 'doctor.outbound_ok', { ...params, address });
    });
  } finally {
    await client.close().catch(() => {});
  }
  r.checks.push(...local.checks.sort((a, b) => a.id.localeCompare(b.id)));
}

/** The first line the SMTP listener sends, or why there is none. */
function smtpGreeting(host: string, port: number): Promise<{ line?: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: TCP_TIMEOUT_MS });
    let buf = '';
    const end = (v: { line?: string; error?: string }) => {
      socket.destroy();
      resolve(v);
    };
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0 || buf.length > 512) {
        socket.write('QUIT\r\n');
        end({ line: buf.slice(0, nl >= 0 ? nl : 512).trim() });
      }
    });
    socket.once('timeout', () => end({ error: 'ETIMEDOUT' }));
    socket.once('error', (err: NodeJS.ErrnoException) => end({ error: err.code ?? err.message }));
  });
}

async function checkSmtp(r: Report, config: Config): Promise<void> {
  const smtp = config.smtp;
  if (!smtp) {
    r.add('smtp', 'smtp', 'skip', 'doctor.smtp_off');
    return;
  }
  if (smtp.tlsCert && smtp.tlsKey) {
    try {
      tls.createSecureContext({ cert: fs.readFileSync(smtp.tlsCert), key: fs.readFileSync(smtp.tlsKey) });
      r.add('smtp', 'smtp_tls', 'ok', 'doctor.smtp_tls_ok', { cert: smtp.tlsCert });
    } catch (err) {
      r.add(
        'smtp',
        'smtp_tls',
        'fail',
        'doctor.smtp_tls_bad',
        { cert: smtp.tlsCert, key: smtp.tlsKey, reason: (err as Error).message },
        'doctor.smtp_tls_fix',
      );
    }
  } else r.add('smtp', 'smtp_tls', 'warn', 'doctor.smtp_no_tls', undefined, 'doctor.smtp_no_tls_fix');
  const host = smtp.host === '0.0.0.0' || smtp.host === '' ? '127.0.0.1' : smtp.host === '::' ? '::1' : smtp.host;
  const g = await smtpGreeting(host, smtp.port);
  const params = { host, port: smtp.port, line: g.line ?? '', reason: g.error ?? '' };
  if (g.line?.startsWith('220')) r.add('smtp', 'smtp_listener', 'ok', 'doctor.smtp_ok', params);
  else if (g.error === 'ECONNREFUSED')
    r.add('smtp', 'smtp_listener', 'warn', 'doctor.smtp_refused', params, 'doctor.smtp_refused_fix');
  else if (g.line !== undefined)
    r.add('smtp', 'smtp_listener', 'fail', 'doctor.smtp_not_smtp', params, 'doctor.smtp_not_smtp_fix');
  else r.add('smtp', 'smtp_listener', 'fail', 'doctor.smtp_unreachable', params, 'doctor.smtp_refused_fix');
}

function checkPeers(r: Report, config: Config): void {
  let any = false;
  if (config.dialect === 'postgresql' && config.preMigrateSnapshotKeep > 0) {
    any = true;
    const missing = ['pg_dump', 'pg_restore'].filter((t) => !onPath(t));
    if (missing.length)
      r.add('peers', 'pg_tools', 'warn', 'doctor.pg_tools_missing', { tools: missing }, 'doctor.pg_tools_fix');
    else r.add('peers', 'pg_tools', 'ok', 'doctor.pg_tools_ok', { path: onPath('pg_dump')! });
  }
  if (config.ai.apiKey) {
    any = true;
    const font = reportFont();
    if (fs.existsSync(font)) r.add('peers', 'report_font', 'ok', 'doctor.font_ok', { path: font });
    else r.add('peers', 'report_font', 'warn', 'doctor.font_missing', { path: font }, 'doctor.font_fix');
  }
  if (!any) r.add('peers', 'peers', 'skip', 'doctor.peers_none');
}

function print(m: Messages, checks: Check[]): void {
  let group = '';
  for (const c of checks) {
    if (c.group !== group) {
      if (group) out();
      out(m.t(`doctor.group_${c.group}`));
      group = c.group;
    }
    out(`  ${MARK[c.status]} ${c.message}${c.fix && c.status !== 'ok' ? ` → ${c.fix}` : ''}`);
  }
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  out();
  out(
    failed
      ? m.t('doctor.summary_failed', { count: failed, warnings: warned })
      : m.t('doctor.summary_ok', { count: checks.length, warnings: warned }),
  );
}

export async function runDoctor(m: Messages, o: { json?: boolean }): Promise<number> {
  const r = new Report(m);
  let config: Config | undefined;
  try {
    config = cliConfig();
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    r.add('config', 'config', 'fail', 'doctor.config_bad', { reason: err.message }, 'doctor.config_bad_fix');
  }
  if (config) {
    r.add('config', 'config', 'ok', 'doctor.config_ok', { version: VERSION, dir: config.dataDir });
    checkCors(r, config);
    checkDataDir(r, config);
    const plugins = await checkPlugins(r, config);
    const state = await checkDatabase(r, config, m);
    if (state) {
      try {
        const keyOk = await checkSecrets(r, config, state);
        if (!state.migrated) r.add('instances', 'instances', 'skip', 'doctor.instances_skipped');
        else {
          const instances = await readInstances(state.db, plugins);
          if (keyOk) checkInstances(r, m, instances, new SecretsAtRest(config.secretKey, config.previousSecretKey));
          await checkOutbound(r, m, config, instances);
        }
      } finally {
        await state.db.close();
      }
    }
    await checkSmtp(r, config);
    checkPeers(r, config);
  }
  if (o.json) printJson({ ok: !r.failed, version: VERSION, checks: r.checks });
  else print(m, r.checks);
  return r.failed ? EXIT.failed : EXIT.ok;
}
