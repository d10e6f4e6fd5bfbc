/**
 * The SMTP listener (`SERVICE_SMTP_PORT`, off by default): devices that can only send email (a NAS,
 * a router, a printer) notify Herald by mail to `<webhook_token>@<any domain>`. One listener serves
 * every provider kind whose plugin declares `manifest.mail`; the plugin reads the message
 * (`verifyMail` at RCPT, `handleMail` after DATA), the core does the rest as the webhook route does:
 *
 * - a recipient no provider has is refused at RCPT (550), never accepted and then dropped;
 * - AUTH PLAIN and LOGIN take a provider's token as the password (any user name); a provider whose
 *   plugin requires it refuses an unauthenticated RCPT (530). Without a TLS certificate STARTTLS is
 *   not offered and AUTH works in plain text (home routers often cannot do STARTTLS); with one,
 *   AUTH needs STARTTLS first;
 * - SIZE is advertised and a message over it is refused (552), as is one over the plugin's own limit;
 * - RCPTs per source address are limited by the plugin's `webhook.rateLimitPerMinute` (450 beyond,
 *   a temporary failure: the sender tries again later);
 * - the 250 comes only once every event is durable (the same ingest path and payload-log columns as
 *   a webhook); a failure to record is a 451, so the sender keeps the message and retries.
 *
 * The token is the recipient's local part: log lines never carry a recipient, excerpts in the
 * payload log have it masked, and replies never echo it.
 */
import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import type {
  SMTPServer,
  SMTPServerAddress,
  SMTPServerAuthentication,
  SMTPServerDataStream,
  SMTPServerSession,
} from 'smtp-server';
import { ConfigurationError, type SmtpConfig } from '../../config/config.ts';
import type { Core } from '../../core.ts';
import type { Queryable } from '../../db/database.ts';
import { WindowLimiter } from '../../http/rate-limit.ts';
import { liveOf } from '../../live/hints.ts';
import {
  errorCode,
  type InboundMail,
  type MailEnvelope,
  type MailSpec,
  type ProviderInstance,
  type WebhookResult,
} from '../../plugin-api/index.ts';
import { type ProviderRow, providerRowFrom } from '../../plugins/host.ts';
import { DbInstanceStore } from '../../plugins/store.ts';
import type { ProviderDbRow } from '../definitions/provider.ts';
import { ReplayedError } from '../pipeline/ingest.ts';
import type { Relay } from '../pipeline/relay.ts';
import { InvalidEventError } from '../service.ts';
import { payloadExcerpt, recordPayload } from './payload-log.ts';

/** What a token looks like (base64url, as the providers API makes them): anything else is no recipient of ours. */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;
/** Recipients one message may have; each names a provider (one event set per provider). */
const MAX_RECIPIENTS = 20;
/** Failed AUTH attempts one connection may make; the next failure closes it (421). */
const MAX_AUTH_FAILURES = 3;
/** Connections open at once. */
const MAX_CLIENTS = 100;
/** How long a closing listener waits for its connections once the messages in flight are done. */
const CLOSE_WAIT_MS = 2000;
const MASK = '********';

/** A reply to the client: smtp-server sends `responseCode` and the message. */
class SmtpReply extends Error {
  readonly responseCode: number;
  constructor(responseCode: number, message: string) {
    super(message);
    this.responseCode = responseCode;
    this.name = 'SmtpReply';
  }
}

/** Who a session authenticated as: the provider whose token it gave as the password, and the user name. */
interface SessionUser {
  providerId: string;
  name: string;
}

/** A recipient accepted at RCPT, with the provider it names. */
interface Accepted {
  provider: ProviderRow;
  recipient: string;
  authenticated: boolean;
}

/** How handling one provider's copy of a message ended. */
type Outcome = { ok: true; eventIds: string[] } | { ok: false; permanent: boolean; message: string };

export interface SmtpListener {
  /** The address it listens on, once started. */
  address(): { host: string; port: number } | undefined;
  start(): Promise<void>;
  /**
   * Takes no new connections; messages in flight finish until `grace` aborts; then every connection is closed (421).
   */
  drain(grace: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Every occurrence of `token` (any case) in `text` masked. */
function masked(text: string | null, token: string): string | null {
  if (text === null) return null;
  const lower = text.toLowerCase();
  const t = token.toLowerCase();
  let out = '';
  let from = 0;
  for (let i = lower.indexOf(t); i >= 0; i = lower.indexOf(t, from)) {
    out += text.slice(from, i) + MASK;
    from = i + t.length;
  }
  return out + text.slice(from);
}

/**
 * The PEM certificate and key for STARTTLS, checked now so that a bad pair refuses the boot rather than every client.
 */
function readTls(cfg: SmtpConfig): { cert: Buffer; key: Buffer } | undefined {
  if (!cfg.tlsCert || !cfg.tlsKey) return undefined;
  const read = (name: string, file: string) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new ConfigurationError(
        `${name} "${file}" cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  };
  const cert = read('SERVICE_SMTP_TLS_CERT', cfg.tlsCert);
  const key = read('SERVICE_SMTP_TLS_KEY', cfg.tlsKey);
  try {
    tls.createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigurationError(
      'SERVICE_SMTP_TLS_CERT and SERVICE_SMTP_TLS_KEY are not a usable PEM certificate and private key ' +
        `pair: ${(err as Error).message}`,
    );
  }
  return { cert, key };
}

/**
 * Builds the listener when `SERVICE_SMTP_PORT` is set (undefined otherwise): reads the TLS files
 * and loads smtp-server, so that a bad certificate refuses the boot. Nothing listens until start().
 */
export async function createSmtpListener(core: Core, relay: () => Relay): Promise<SmtpListener | undefined> {
  if (!core.config.smtp) return undefined;
  const cfg: SmtpConfig = core.config.smtp;
  const log = core.logs.get('smtp');
  const secure = readTls(cfg);
  const { SMTPServer: Server } = await import('smtp-server');

  /** The kinds whose plugins take mail, with their declarations. */
  const mailKinds = new Map<string, MailSpec>();
  for (const p of core.plugins.plugins.values()) {
    const mail = p.kind === 'provider' ? p.def.manifest.mail : undefined;
    if (mail) mailKinds.set(p.id, mail);
  }
  const kinds = [...mailKinds.keys()];
  const limiters = new Map<string, WindowLimiter>();
  const accepted = new WeakMap<SMTPServerSession, Map<string, Accepted>>();
  const authFailures = new WeakMap<SMTPServerSession, number>();
  const inflight = new Set<Promise<unknown>>();

  const record = (
    provider: ProviderRow,
    ip: string,
    status: number,
    error: string | null,
    excerpt: string | null = null,
    eventIds: string[] | null = null,
    q: Queryable = core.db,
  ) =>
    recordPayload(
      q,
      core.clock.now(),
      { userId: provider.user_id, providerId: provider.id },
      { status, error, excerpt, ip, eventIds },
    ).then(() =>
      // After the write: a client that refetches the log on this hint finds the entry.
      liveOf(core.services).publish(provider.user_id, { kind: 'webhook_log', provider_id: provider.id }),
    );

  /**
   * The provider record a token names, among the kinds that take mail: exactly, else ignoring case
   * (some senders lower-case the whole address), when that is unambiguous.
   */
  const providerByToken = async (token: string): Promise<ProviderRow | undefined> => {
    if (!TOKEN.test(token) || !kinds.length) return undefined;
    const inKinds = kinds.map(() => '?').join(', ');
    const exact = await core.db.get<ProviderDbRow>(
      `SELECT * FROM providers WHERE webhook_token = ? AND kind IN (${inKinds})`,
      [token, ...kinds],
    );
    if (exact) return providerRowFrom(exact);
    const folded = await core.db.all<ProviderDbRow>(
      `SELECT * FROM providers WHERE lower(webhook_token) = ? AND kind IN (${inKinds})`,
      [token.toLowerCase(), ...kinds],
    );
    return folded.length === 1 ? providerRowFrom(folded[0]!) : undefined;
  };

  /**
   * The running instance of a provider, started here when this replica does not run it yet (as the webhook route does).
   */
  const instanceOf = async (provider: ProviderRow) => {
    const running = await core.plugins.ensureProvider(provider);
    const instance = running?.instance;
    return {
      instance: instance?.handleMail
        ? (instance as ProviderInstance & Required<Pick<ProviderInstance, 'handleMail'>>)
        : undefined,
      state: running?.state ?? 'stopped',
    };
  };

  const envelopeOf = (session: SMTPServerSession, recipient: string, authenticated: boolean): MailEnvelope => {
    const user = session.user as SessionUser | undefined;
    return {
      from: (session.envelope.mailFrom ? session.envelope.mailFrom.address : '').toLowerCase(),
      recipient,
      ip: session.remoteAddress,
      authenticated,
      ...(authenticated && user ? { authUser: user.name } : {}),
      secure: session.secure,
    };
  };

  async function onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<SessionUser> {
    const provider = typeof auth.password === 'string' ? await providerByToken(auth.password) : undefined;
    // Exact: a password is typed as it is shown, never lower-cased by the sender.
    if (provider && provider.webhook_token === auth.password)
      return { providerId: provider.id, name: auth.username ?? '' };
    const failures = (authFailures.get(session) ?? 0) + 1;
    authFailures.set(session, failures);
    log.info({ ip: session.remoteAddress, method: auth.method, failures }, 'SMTP authentication failed');
    if (failures >= MAX_AUTH_FAILURES)
      throw new SmtpReply(421, 'Too many failed authentication attempts; closing the connection');
    throw new SmtpReply(
      535,
      'Authentication failed: the password must be the token of a Herald provider that receives email',
    );
  }

  async function onRcptTo(address: SMTPServerAddress, session: SMTPServerSession): Promise<void> {
    const recipient = address.address;
    const at = recipient.lastIndexOf('@');
    const domain = at >= 0 ? recipient.slice(at + 1) : '';
    const ip = session.remoteAddress;
    const provider = await providerByToken(at >= 0 ? recipient.slice(0, at) : recipient);
    if (!provider) {
      log.info({ ip, domain }, 'mail refused at RCPT: no provider has this address');
      throw new SmtpReply(550, 'No such mailbox here');
    }
    const turnAway = async (code: number, reply: string, status: number, error: string) => {
      log.info({ ip, provider_id: provider.id, code }, `mail refused at RCPT: ${error}`);
      await record(provider, ip, status, `SMTP ${code} at RCPT: ${error}`);
      return new SmtpReply(code, reply);
    };
    // The plugin's limit holds per source address over all of its providers together, as for webhooks.
    const limit = core.plugins.provider(provider.kind)?.def.manifest.webhook?.rateLimitPerMinute;
    if (limit) {
      let l = limiters.get(provider.kind);
      if (!l) {
        l = new WindowLimiter(limit);
        limiters.set(provider.kind, l);
      }
      const wait = l.take(ip, core.clock.now().getTime());
      if (wait)
        throw await turnAway(
          450,
          `Too many messages from your address (at most ${limit} a minute); try again in ${wait} s`,
          429,
          `rate limit of ${limit} messages a minute per address exceeded`,
        );
    }
    if (!provider.enabled) throw await turnAway(550, 'This mailbox is disabled', 409, 'provider is disabled');
    const { instance, state } = await instanceOf(provider);
    if (!instance)
      throw await turnAway(
        451,
        'This mailbox is not available right now; try again later',
        503,
        `provider instance is ${state}`,
      );
    const user = session.user as SessionUser | undefined;
    const authenticated = user !== undefined && user.providerId === provider.id;
    if (instance.verifyMail) {
      try {
        await instance.verifyMail(envelopeOf(session, recipient, authenticated));
      } catch (err) {
        const status = errorCode(err) === 'WEBHOOK_REJECTED' ? (err as { status: number }).status : 500;
        if (status >= 500) {
          log.error({ err, provider_id: provider.id }, 'verifyMail failed');
          throw await turnAway(
            451,
            'The mailbox could not check this message; try again later',
            500,
            (err as Error).message,
          );
        }
        const code = status === 401 ? 530 : 550;
        throw await turnAway(code, (err as Error).message, status, (err as Error).message);
      }
    }
    let list = accepted.get(session);
    if (!list) {
      list = new Map();
      accepted.set(session, list);
    }
    list.set(recipient.toLowerCase(), { provider, recipient, authenticated });
  }

  /**
   * Reads the whole message, keeping at most the limit (the rest is read and dropped: the client must reach the final
   * dot).
   */
  const collect = (stream: SMTPServerDataStream): Promise<Buffer | null> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= cfg.maxBytes) chunks.push(c);
      });
      stream.once('error', reject);
      stream.once('end', () => resolve(stream.sizeExceeded || size > cfg.maxBytes ? null : Buffer.concat(chunks)));
    });

  /** Hands one provider's copy of the message to its plugin and records the events. */
  async function deliver(a: Accepted, session: SMTPServerSession, raw: Buffer): Promise<Outcome> {
    const { provider } = a;
    const ip = session.remoteAddress;
    // Worked out once, before any transaction (see the webhook route); the token masked.
    const excerpt = masked(payloadExcerpt(raw), provider.webhook_token);
    const { instance, state } = await instanceOf(provider);
    if (!instance) {
      await record(provider, ip, 503, `SMTP 451: provider instance is ${state}`, excerpt);
      return { ok: false, permanent: false, message: 'mailbox not available' };
    }
    const mail: InboundMail = { ...envelopeOf(session, a.recipient, a.authenticated), raw };
    let result: WebhookResult;
    try {
      result = await instance.handleMail(mail);
    } catch (err) {
      const status = errorCode(err) === 'WEBHOOK_REJECTED' ? (err as { status: number }).status : 500;
      const msg = (err as Error).message;
      if (status === 409) {
        // Seen before: the sender retried a message that was recorded. Accepted again, nothing new.
        await record(provider, ip, 409, `SMTP 250: ${msg}`, excerpt);
        return { ok: true, eventIds: [] };
      }
      if (status < 500) {
        await record(provider, ip, status, `SMTP 554: ${msg}`, excerpt);
        return { ok: false, permanent: true, message: msg };
      }
      log.error({ err, provider_id: provider.id }, 'mail handler failed');
      await record(provider, ip, 500, `SMTP 451: ${msg}`, excerpt);
      return { ok: false, permanent: false, message: msg };
    }
    const ids: string[] = [];
    const remember = (q: Queryable) =>
      result.replayKey
        ? new DbInstanceStore(q, provider.id, () => core.clock.now()).set(result.replayKey.key, 1, {
            ttlSeconds: result.replayKey.ttlSeconds,
          })
        : Promise.resolve();
    let recorded = false;
    try {
      for (let i = 0; i < result.events.length; i++) {
        const last = i === result.events.length - 1;
        const r = await relay().ingestWith(
          provider,
          result.events[i]!,
          last ? { webhook: { ip, excerpt, earlierIds: [...ids], replayKey: result.replayKey } } : undefined,
        );
        if (last && r.eventIds.length) recorded = true;
        ids.push(...r.eventIds);
      }
    } catch (err) {
      // A copy of the same message committed between the plugin's check and this write: it is recorded.
      if (err instanceof ReplayedError) {
        await record(provider, ip, 409, `SMTP 250: ${err.message}`, excerpt, ids);
        return { ok: true, eventIds: ids };
      }
      if (err instanceof InvalidEventError) {
        await record(provider, ip, 422, `SMTP 554: ${err.message}`, excerpt, ids);
        return { ok: false, permanent: true, message: 'The message produced an invalid event' };
      }
      log.error({ err, provider_id: provider.id }, 'recording a mail event failed');
      await record(provider, ip, 500, 'SMTP 451: the event could not be recorded', excerpt, ids).catch(() => {});
      return { ok: false, permanent: false, message: 'the event could not be recorded' };
    }
    if (!ids.length)
      await Promise.all([
        remember(core.db),
        record(provider, ip, 200, 'nothing recorded: the message carried no event', excerpt, []),
      ]);
    else if (!recorded) await Promise.all([remember(core.db), record(provider, ip, 202, null, excerpt, ids)]);
    return { ok: true, eventIds: ids };
  }

  async function onData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const raw = await collect(stream);
    const list = accepted.get(session);
    // One copy per provider, however many of its addresses the message was sent to.
    const targets = new Map<string, Accepted>();
    for (const r of session.envelope.rcptTo) {
      const a = list?.get(r.address.toLowerCase());
      if (a && !targets.has(a.provider.id)) targets.set(a.provider.id, a);
    }
    const ip = session.remoteAddress;
    if (!targets.size) throw new SmtpReply(451, 'No accepted recipient is known any more; try again');
    for (const a of targets.values()) {
      const limit = Math.min(cfg.maxBytes, mailKinds.get(a.provider.kind)?.maxBytes ?? cfg.maxBytes);
      if (raw === null || raw.length > limit) {
        await Promise.all(
          [...targets.values()].map((t) =>
            record(t.provider, ip, 413, `SMTP 552: message of ${stream.byteLength} bytes exceeds ${limit}`),
          ),
        );
        log.info({ ip, bytes: stream.byteLength, limit }, 'mail refused: over the size limit');
        throw new SmtpReply(552, `Message exceeds the maximum size of ${limit} bytes`);
      }
    }
    const outcomes: Outcome[] = [];
    for (const a of targets.values()) outcomes.push(await deliver(a, session, raw!));
    const failed = outcomes.filter((o): o is Extract<Outcome, { ok: false }> => !o.ok);
    if (failed.some((o) => !o.permanent)) {
      log.warn({ ip, providers: [...targets.keys()] }, 'mail not accepted: answered 451 so that the sender retries');
      throw new SmtpReply(451, 'The message could not be recorded; try again later');
    }
    if (failed.length === outcomes.length) throw new SmtpReply(554, failed[0]!.message);
    const ids = outcomes.flatMap((o) => (o.ok ? o.eventIds : []));
    log.info({ ip, providers: [...targets.keys()], event_ids: ids, bytes: raw!.length }, 'mail accepted');
    return `OK: ${ids.length} event${ids.length === 1 ? '' : 's'} recorded`;
  }

  const callback = <T>(work: Promise<T>, cb: (err: Error | null, value?: T) => void, what: string) => {
    const done = work.then(
      (v) => cb(null, v),
      (err) => {
        if (err instanceof SmtpReply) {
          cb(err);
          return;
        }
        log.error({ err }, `SMTP ${what} failed`);
        cb(new SmtpReply(451, 'Temporary failure; try again later'));
      },
    );
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
  };

  const server: SMTPServer = new Server({
    name: core.config.publicUrl ? new URL(core.config.publicUrl).hostname : os.hostname(),
    banner: 'Herald',
    size: cfg.maxBytes,
    rejectOversized: true,
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: true,
    // With a certificate, AUTH waits for STARTTLS; without one (routers that cannot do STARTTLS),
    // STARTTLS is not offered at all (never the library's built-in test certificate) and AUTH
    // works in plain text: the token travels as it would in a webhook URL over plain HTTP.
    allowInsecureAuth: !secure,
    disabledCommands: secure ? [] : ['STARTTLS'],
    ...(secure ?? {}),
    disableReverseLookup: true,
    logger: false,
    maxClients: MAX_CLIENTS,
    maxRecipients: MAX_RECIPIENTS,
    onAuth(auth, session, cb) {
      callback(
        onAuth(auth, session).then((user) => ({ user })),
        (err, res) => cb(err, res),
        'AUTH',
      );
    },
    onMailFrom(_address, session, cb) {
      accepted.delete(session);
      cb();
    },
    onRcptTo(address, session, cb) {
      callback(onRcptTo(address, session), (err) => cb(err), 'RCPT');
    },
    onData(stream, session, cb) {
      callback(onData(stream, session), (err, message) => cb(err, message), 'DATA');
    },
  });
  // Replies go out at once: with Nagle's algorithm a reply written while the previous one is
  // unacknowledged waits for the client's delayed ACK (40 ms a command on Linux).
  server.server.on('connection', (socket: net.Socket) => socket.setNoDelay(true));
  // Connection errors (a client that resets, a failed TLS handshake) are the client's business.
  server.on('error', (err: Error) => log.debug({ err }, 'SMTP connection error'));

  let listening: { host: string; port: number } | undefined;
  let closing: Promise<void> | undefined;
  const closeServer = () => {
    closing ??= new Promise<void>((resolve) => {
      if (!listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
    });
    return closing;
  };
  const closeConnections = async () => {
    const closed = closeServer();
    for (const c of server.connections) {
      c.send(421, 'Herald is shutting down; try again later');
      c.close();
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      closed,
      new Promise<void>((r) => {
        timer = setTimeout(r, CLOSE_WAIT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  };

  return {
    address: () => listening,
    async start() {
      await new Promise<void>((resolve, reject) => {
        const failed = (err: Error) =>
          reject(new Error(`the SMTP listener cannot listen on ${cfg.host}:${cfg.port}: ${err.message}`));
        server.server.once('error', failed);
        server.listen(cfg.port, cfg.host, () => {
          server.server.off('error', failed);
          resolve();
        });
      });
      listening = { host: cfg.host, port: cfg.port };
      if (!kinds.length)
        log.warn('SERVICE_SMTP_PORT is set but no enabled plugin receives email: every recipient is refused');
      log.info(
        { host: cfg.host, port: cfg.port, starttls: Boolean(secure), max_bytes: cfg.maxBytes, kinds },
        'SMTP listener ready',
      );
    },
    async drain(grace) {
      void closeServer();
      const over = new Promise<void>((r) => {
        if (grace.aborted) r();
        else grace.addEventListener('abort', () => r(), { once: true });
      });
      // Messages in flight are answered (250 once recorded) before the connections go.
      while (inflight.size && !grace.aborted) await Promise.race([Promise.allSettled([...inflight]), over]);
      await closeConnections();
    },
    close: closeConnections,
  };
}
