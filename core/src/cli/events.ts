/**
 * `herald events prune --before <date>`: the daily retention job (`applyRetention`) run now with
 * that date as its cutoff: finished events (dispatched, dropped, failed, partial) created before
 * it, with the webhook payload log, job runs and message threads of that age, and whatever has
 * expired anyway (token sign-outs, plugin store entries). Pending and deferred events stay.
 * A running service runs it in its own process (`POST /api/admin/events/prune`, asked as an
 * administrator of the database with a token signed with SERVICE_SECRET_KEY, as the service signs
 * its own): two processes writing one SQLite file contend for its write lock, and the service's
 * deliveries waited behind the prune (scripts/bench/RESULTS.md, issue 27 item 7). The command
 * deletes from its own process only when nothing listens at the service's address, or with `--local`.
 * `herald events stats`: counts of the event log by status, by provider and by event type.
 */
import type { Config } from '../config/config.ts';
import { type CliCore, withCore } from './context.ts';
import type { Messages } from './i18n.ts';
import { CliError, EXIT, note, out, printJson, table } from './output.ts';

const DAY_MS = 86_400_000;

/** A cutoff: an ISO 8601 date or date-time (a date alone is midnight UTC), or `<n>d`, that many days ago. */
export function parseCutoff(value: string, now: Date): Date {
  const v = value.trim();
  const days = /^(\d{1,5})d$/.exec(v);
  let at: Date;
  if (days) at = new Date(now.getTime() - Number(days[1]) * DAY_MS);
  else if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) {
    at = new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v.replace(' ', 'T'));
  } else at = new Date(Number.NaN);
  if (Number.isNaN(at.getTime())) throw new CliError('events.bad_date', { value }, EXIT.usage);
  if (at.getTime() > now.getTime()) throw new CliError('events.future_date', { value }, EXIT.usage);
  return at;
}

/** What `events prune` was given besides the date. */
export interface PruneOptions {
  before: string;
  /** The running service's address, instead of the one SERVICE_HOST and SERVICE_PORT give. */
  url?: string;
  /** Delete from this process, without asking a running service. */
  local?: boolean;
}

/**
 * Where the running service answers: SERVICE_PORT on the loopback address, or on SERVICE_HOST when that names one
 * address (as the service's own log line `listening` gives it).
 */
export function serviceUrl(config: Config, url?: string): string {
  if (url) return url.replace(/\/+$/, '');
  const h = config.host;
  const host = !h || h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h;
  return `http://${host}:${config.port}`;
}

/** A prune as the service shows it (`GET /api/admin/events/prune/{id}`). */
interface PruneAnswer {
  id: string;
  state: 'running' | 'done' | 'failed' | 'stopped';
  deleted: number;
  kept_unfinished: number | null;
  error: string | null;
}

/** How long one request to the service may take; the prune itself runs on in the service between them. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Between two looks at a running prune. */
const POLL_MS = 500;
/** A token lives this long: one is signed for each request. */
const TOKEN_TTL_S = 120;

/** No process listens at the address: the connection is refused (nothing of a service is there to contend with). */
function nothingListens(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
  const codes = [cause?.code, ...(cause?.errors ?? []).map((e) => e.code)];
  return codes.includes('ECONNREFUSED');
}

const reasonOf = (err: unknown): string => {
  const e = err as { message?: string; cause?: { message?: string } };
  return e.cause?.message ?? e.message ?? String(err);
};

/**
 * Asks the service at `url` to run the prune (`POST /api/admin/events/prune`) and follows it to its end. Undefined
 * when nothing listens there; the prune's end otherwise (a refusal or a lost service is thrown).
 */
async function pruneInService(
  core: CliCore,
  m: Messages,
  url: string,
  cutoff: Date,
): Promise<{ deleted: number; kept: number } | undefined> {
  // An administrator of this database, with a token the service accepts from its own key: what the command line's
  // access to SERVICE_SECRET_KEY and the database already allows. A service on another key or database refuses it.
  const admin = await core.db.get<{ id: string; role: string; token_version: unknown }>(
    `SELECT id, role, token_version FROM users WHERE role = 'admin' AND is_active = ? ORDER BY created_at, id LIMIT 1`,
    [true],
  );
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (admin) {
      const version = Number(admin.token_version ?? 0);
      headers.authorization = `Bearer ${await core.tokens.issue(admin.id, admin.role, version, TOKEN_TTL_S)}`;
    }
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json: json as Record<string, unknown> | undefined, text };
  };
  /** A refusal as the service words it: the problem's detail, or the status. */
  const refusal = (r: { status: number; json?: Record<string, unknown>; text: string }) => {
    const detail = r.json?.detail;
    return typeof detail === 'string' ? detail : `HTTP ${r.status} ${r.text.slice(0, 200)}`.trim();
  };

  let started: Awaited<ReturnType<typeof call>>;
  try {
    started = await call('POST', '/api/admin/events/prune', { before: cutoff.toISOString() });
  } catch (err) {
    if (nothingListens(err)) return undefined;
    throw new CliError('events.service_failed', { url, reason: reasonOf(err) });
  }
  if (started.status === 401 && !admin) throw new CliError('events.no_admin', { url });
  if (started.status === 401 || started.status === 403)
    throw new CliError('events.service_refused', { url, reason: refusal(started) });
  if (started.status === 409 && started.json?.code === 'prune_running') {
    const { HttpError } = await import('../http/problem.ts');
    throw new HttpError(409, 'prune_running', refusal(started));
  }
  if (started.status !== 202 || typeof started.json?.id !== 'string')
    throw new CliError('events.service_failed', { url, reason: refusal(started) });
  note(m.t('events.asking_service', { url }));
  let job = started.json as unknown as PruneAnswer;
  while (job.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    let r: Awaited<ReturnType<typeof call>>;
    try {
      r = await call('GET', `/api/admin/events/prune/${job.id}`);
    } catch (err) {
      throw new CliError('events.prune_lost', { url, reason: reasonOf(err) });
    }
    // Another process answers now (the service restarted): it knows nothing of this prune.
    if (r.status !== 200 || r.json?.id !== job.id) throw new CliError('events.prune_lost', { url, reason: refusal(r) });
    job = r.json as unknown as PruneAnswer;
  }
  if (job.state === 'stopped') throw new CliError('events.prune_stopped', { count: job.deleted });
  if (job.state === 'failed')
    throw new CliError('events.prune_failed', { count: job.deleted, reason: job.error ?? '' });
  return { deleted: job.deleted, kept: job.kept_unfinished ?? 0 };
}

/**
 * `events prune`: a running service runs it (the same paced cleanup as its daily job, in its own process); only when
 * no service answers at its address, or with `--local`, this process deletes, as the daily job would.
 */
export async function pruneEvents(m: Messages, o: PruneOptions): Promise<void> {
  const now = new Date();
  const cutoff = parseCutoff(o.before, now);
  await withCore(m, 'existing', 'always', async (core) => {
    const print = (deleted: number, kept: number) => {
      out(m.t('events.pruned', { count: deleted, before: m.date(cutoff.toISOString()) }));
      if (kept) out(m.t('events.kept_unfinished', { count: kept }));
    };
    // Nothing is older than now: nothing to ask for.
    if (cutoff.getTime() === now.getTime()) return print(0, await unfinishedBefore(core, cutoff));
    if (!o.local) {
      const url = serviceUrl(core.config, o.url);
      const done = await pruneInService(core, m, url, cutoff);
      if (done) return print(done.deleted, done.kept);
      note(m.t('events.no_service', { url }));
    }
    // Loaded only here.
    const { applyRetention } = await import('../relay/retention.ts');
    const deleted = await applyRetention(core, undefined, { before: cutoff });
    print(deleted, await unfinishedBefore(core, cutoff));
  });
}

/** Events older than the cutoff that a prune keeps: pending or deferred. */
async function unfinishedBefore(core: CliCore, cutoff: Date): Promise<number> {
  const left = await core.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM event_log WHERE created_at < ?', [
    cutoff.toISOString(),
  ]);
  return Number(left?.n ?? 0);
}

interface Count {
  n: unknown;
}

export async function eventStats(m: Messages, o: { json?: boolean }): Promise<void> {
  await withCore(m, 'existing', 'always', async (core) => {
    const db = core.db;
    const total = Number((await db.get<Count>('SELECT COUNT(*) AS n FROM event_log'))?.n ?? 0);
    const range = await db.get<{ first: string | null; last: string | null }>(
      'SELECT MIN(created_at) AS first, MAX(created_at) AS last FROM event_log',
    );
    const byStatus = (
      await db.all<Count & { status: string }>(
        'SELECT dispatch_status AS status, COUNT(*) AS n FROM event_log GROUP BY dispatch_status ORDER BY ' +
          'n DESC, status',
      )
    ).map((r) => ({ status: r.status, count: Number(r.n) }));
    const byProvider = (
      await db.all<Count & { kind: string; id: string | null; name: string | null; email: string | null }>(
        `SELECT e.provider_kind AS kind, e.provider_id AS id, p.name AS name, u.email AS email, COUNT(*) AS n
         FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id LEFT JOIN users u ON u.id = p.user_id
        GROUP BY e.provider_kind, e.provider_id, p.name, u.email ORDER BY n DESC, kind, name`,
      )
    ).map((r) => ({ provider_id: r.id, kind: r.kind, name: r.name, owner: r.email, count: Number(r.n) }));
    const byType = (
      await db.all<Count & { type: string; kind: string }>(
        'SELECT provider_kind AS kind, event_type AS type, COUNT(*) AS n FROM event_log GROUP BY ' +
          'provider_kind, event_type ORDER BY n DESC, kind, type',
      )
    ).map((r) => ({ kind: r.kind, event_type: r.type, count: Number(r.n) }));
    const deferred = Number((await db.get<Count>('SELECT COUNT(*) AS n FROM deferred_dispatch'))?.n ?? 0);
    if (o.json) {
      printJson({
        total,
        first_at: range?.first ?? null,
        last_at: range?.last ?? null,
        deferred,
        by_status: byStatus,
        by_provider: byProvider,
        by_type: byType,
        retention_days: core.config.eventLogRetentionDays,
      });
      return;
    }
    if (!total) out(m.t('events.empty'));
    else out(m.t('events.total', { count: total, first: m.date(range!.first!), last: m.date(range!.last!) }));
    const days = core.config.eventLogRetentionDays;
    out(days > 0 ? m.t('events.retention', { count: days }) : m.t('events.retention_off'));
    if (deferred) out(m.t('events.deferred', { count: deferred }));
    if (!total) return;
    out();
    for (const line of table(
      [m.t('events.col_status'), m.t('events.col_count')],
      byStatus.map((r) => [r.status, String(r.count)]),
    ))
      out(line);
    out();
    for (const line of table(
      [m.t('events.col_provider'), m.t('events.col_kind'), m.t('events.col_owner'), m.t('events.col_count')],
      byProvider.map((r) => [r.name ?? m.t('events.deleted_provider'), r.kind, r.owner ?? '', String(r.count)]),
    ))
      out(line);
    out();
    for (const line of table(
      [m.t('events.col_type'), m.t('events.col_kind'), m.t('events.col_count')],
      byType.map((r) => [r.event_type, r.kind, String(r.count)]),
    ))
      out(line);
  });
}
