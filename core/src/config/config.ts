import path from 'node:path';
import type { Static } from 'typebox';
import Type from 'typebox';
import { Value } from 'typebox/value';
import { parseCidrList } from '../net/cidr.ts';
import { weakSecretKeyReason } from './known-dev-keys.ts';

/** The environment, as strings, validated before anything is parsed out of it. */
export const EnvSchema = Type.Object({
  SERVICE_SECRET_KEY: Type.String({ minLength: 1 }),
  SERVICE_SECRET_KEY_PREVIOUS: Type.Optional(Type.String()),
  SERVICE_CORS_ALLOWED_ORIGINS: Type.String({ default: 'http://localhost:5173' }),
  SERVICE_FORWARDED_ALLOW_IPS: Type.String({ default: '127.0.0.1' }),
  SERVICE_DATA_DIR: Type.String({ default: '/data', minLength: 1 }),
  SERVICE_DATABASE_URL: Type.Optional(Type.String({ pattern: '^(sqlite:|postgres(ql)?://)' })),
  SERVICE_DEBUG: Type.String({ default: 'false' }),
  SERVICE_LOG_FORMAT: Type.Union([Type.Literal('text'), Type.Literal('json')], { default: 'text' }),
  SERVICE_LOG_LEVEL: Type.String({ default: 'INFO' }),
  SERVICE_LOG_LEVELS: Type.String({ default: '' }),
  SERVICE_EVENT_LOG_RETENTION_DAYS: Type.String({ default: '30', pattern: '^[0-9]+$' }),
  SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP: Type.String({ default: '5', pattern: '^[0-9]+$' }),
  SERVICE_METRICS_ENABLED: Type.String({ default: 'true' }),
  SERVICE_DISPATCH_THREAD: Type.String({ default: 'false' }),
  SERVICE_GRACEFUL_SHUTDOWN_SECONDS: Type.String({ default: '60', pattern: '^[0-9]+$' }),
  SERVICE_SUPERVISED: Type.Optional(Type.String()),
  SERVICE_MESSAGING_WEBHOOK_SECRET: Type.Optional(Type.String()),
  SERVICE_HOST: Type.String({ default: '0.0.0.0' }),
  SERVICE_PORT: Type.String({ default: '8080', pattern: '^[0-9]{1,5}$' }),
  SERVICE_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SERVICE_PLUGINS: Type.Optional(Type.String()),
  SERVICE_PLUGIN_DIR: Type.Optional(Type.String({ minLength: 1 })),
  SERVICE_OUTBOUND_ALLOW_CIDRS: Type.String({ default: '' }),
  SERVICE_QUOTA_TIMEZONE: Type.String({ default: 'UTC' }),
  SERVICE_USER_STORAGE_MB: Type.String({ default: '200', pattern: '^[0-9]{1,7}$' }),
  SERVICE_SMTP_PORT: Type.Optional(Type.String()),
  SERVICE_SMTP_HOST: Type.Optional(Type.String({ minLength: 1 })),
  SERVICE_SMTP_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  SERVICE_SMTP_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SERVICE_SMTP_MAX_BYTES: Type.String({ default: '1048576', pattern: '^[0-9]+$' }),
  AI_BASE_URL: Type.String({ default: 'https://api.openai.com/v1', pattern: '^https?://' }),
  AI_API_KEY: Type.Optional(Type.String()),
  AI_MODEL: Type.String({ default: 'gpt-4o-mini', minLength: 1 }),
  AI_CONTEXT_TOKENS: Type.String({ default: '16000', pattern: '^[0-9]+$' }),
  AI_MAX_TOOL_ROUNDS: Type.String({ default: '4', pattern: '^[0-9]+$' }),
});

/**
 * Loaded whatever SERVICE_PLUGINS says: the provider that receives self-monitoring signals (the
 * spec gives every user one). The core finds it by its manifest's `selfMonitoring`, not by name.
 */
export const ALWAYS_LOADED_PLUGINS = ['@herald/provider-bridge-self'] as const;

export const FIRST_PARTY_PLUGINS = [
  ...ALWAYS_LOADED_PLUGINS,
  '@herald/provider-immich',
  '@herald/provider-codehost',
  '@herald/provider-planka',
  '@herald/provider-homeassistant',
  '@herald/provider-nut',
  '@herald/provider-webhook',
  '@herald/provider-alertmanager',
  '@herald/provider-grafana',
  '@herald/provider-uptime-kuma',
  '@herald/provider-email-in',
  '@herald/provider-mqtt',
  '@herald/provider-gotify',
  '@herald/provider-ntfy',
  '@herald/provider-apprise-api',
  '@herald/target-telegram',
  '@herald/target-chat-webhook',
  '@herald/target-email',
  '@herald/target-matrix',
  '@herald/target-ntfy',
  '@herald/target-gotify',
  '@herald/target-pushover',
  '@herald/target-http',
  '@herald/target-teams',
  '@herald/target-google-chat',
  '@herald/target-signal',
  '@herald/target-apprise-api',
  '@herald/target-mqtt',
  '@herald/target-webpush',
] as const;

export type LevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export interface Config {
  secretKey: string;
  /** The key before a rotation: stored secrets it sealed are still read, and sealed again with `secretKey` at boot. */
  previousSecretKey?: string;
  corsOrigins: string[];
  forwardedAllowIps: string[];
  dataDir: string;
  databaseUrl: string;
  dialect: 'sqlite' | 'postgresql';
  sqlitePath?: string;
  debug: boolean;
  logFormat: 'text' | 'json';
  logLevel: LevelName;
  logLevels: Record<string, LevelName>;
  eventLogRetentionDays: number;
  preMigrateSnapshotKeep: number;
  metricsEnabled: boolean;
  /** Dispatch (render, send, settle) runs in a worker thread of its own instead of the main event loop. */
  dispatchThread: boolean;
  gracefulShutdownSeconds: number;
  supervisedOverride?: boolean;
  messagingWebhookSecret?: string;
  host: string;
  port: number;
  publicUrl?: string;
  plugins: string[];
  /**
   * The plugin directory (SERVICE_PLUGIN_DIR, default `<data dir>/plugins`): an operator's plugins, installed apart
   * from Herald's own files (plugins/plugin-dir.ts).
   */
  pluginDir: string;
  outboundAllowCidrs: string[];
  quotaTimezone: string;
  /**
   * Each user's storage for documents, memory and reports, in MB of 1,000,000 bytes, unless an administrator set the
   * user's own (assistant/storage.ts).
   */
  userStorageMb: number;
  ai: { baseUrl: string; apiKey?: string; model: string; contextTokens: number; maxToolRounds: number };
  /**
   * The SMTP listener for providers that receive email (SERVICE_SMTP_*); absent when SERVICE_SMTP_PORT is not set
   * (off).
   */
  smtp?: SmtpConfig;
}

export interface SmtpConfig {
  port: number;
  /** Address it listens on; default the service's SERVICE_HOST. */
  host: string;
  /** PEM files for STARTTLS; without them STARTTLS is not offered and AUTH is allowed in plain text. */
  tlsCert?: string;
  tlsKey?: string;
  /** Largest message accepted, in bytes (advertised as SIZE; 552 beyond). */
  maxBytes: number;
}

/** Bounds of SERVICE_SMTP_MAX_BYTES: the whole message is held in memory while it is parsed. */
export const SMTP_MAX_BYTES_RANGE = { min: 1024, max: 25 * 1024 * 1024 } as const;

/** A boot refusal: printed as one line, exit code 1. */
export class ConfigurationError extends Error {}

function bool(name: string, v: string): boolean {
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  throw new ConfigurationError(`${name} must be true or false, got "${v}"`);
}

function level(name: string, v: string): LevelName {
  const s = v.trim().toUpperCase();
  const map: Record<string, LevelName> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARNING: 'warn',
    WARN: 'warn',
    ERROR: 'error',
    CRITICAL: 'fatal',
    FATAL: 'fatal',
  };
  const l = map[s];
  if (!l)
    throw new ConfigurationError(`${name} must be one of TRACE, DEBUG, INFO, WARNING, ERROR, CRITICAL, got "${v}"`);
  return l;
}

function validZone(zone: string): boolean {
  // The default needs no check, and skipping Intl here keeps ICU's time-zone data (about 8 MB
  // resident) out of a boot that never formats a zoned time (scripts/bench/RESULTS.md, issue 27).
  if (zone === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The SMTP listener's settings: undefined when SERVICE_SMTP_PORT is not set, a one-line refusal when they cannot work.
 */
function smtpConfig(e: Static<typeof EnvSchema>, httpPort: number): SmtpConfig | undefined {
  const maxBytes = Number(e.SERVICE_SMTP_MAX_BYTES);
  if (maxBytes < SMTP_MAX_BYTES_RANGE.min || maxBytes > SMTP_MAX_BYTES_RANGE.max) {
    throw new ConfigurationError(
      `SERVICE_SMTP_MAX_BYTES must be ${SMTP_MAX_BYTES_RANGE.min}-${SMTP_MAX_BYTES_RANGE.max} bytes, got ` +
        `${e.SERVICE_SMTP_MAX_BYTES}`,
    );
  }
  if ((e.SERVICE_SMTP_TLS_CERT === undefined) !== (e.SERVICE_SMTP_TLS_KEY === undefined)) {
    throw new ConfigurationError(
      'SERVICE_SMTP_TLS_CERT and SERVICE_SMTP_TLS_KEY go together: set both (PEM files for STARTTLS) or neither',
    );
  }
  if (e.SERVICE_SMTP_PORT === undefined) {
    const stray = (['SERVICE_SMTP_HOST', 'SERVICE_SMTP_TLS_CERT', 'SERVICE_SMTP_TLS_KEY'] as const).find(
      (k) => e[k] !== undefined,
    );
    if (stray)
      throw new ConfigurationError(
        `${stray} is set but SERVICE_SMTP_PORT is not: set SERVICE_SMTP_PORT to turn the SMTP listener on, ` +
          `or remove ${stray}`,
      );
    return undefined;
  }
  const port = /^[0-9]{1,5}$/.test(e.SERVICE_SMTP_PORT) ? Number(e.SERVICE_SMTP_PORT) : Number.NaN;
  if (!(port >= 1 && port <= 65535))
    throw new ConfigurationError(`SERVICE_SMTP_PORT must be a port number 1-65535, got "${e.SERVICE_SMTP_PORT}"`);
  if (port === httpPort)
    throw new ConfigurationError(`SERVICE_SMTP_PORT must differ from SERVICE_PORT (both are ${port})`);
  return {
    port,
    host: e.SERVICE_SMTP_HOST ?? e.SERVICE_HOST,
    tlsCert: e.SERVICE_SMTP_TLS_CERT,
    tlsKey: e.SERVICE_SMTP_TLS_KEY,
    maxBytes,
  };
}

/** Parses and validates the environment. Throws ConfigurationError with a one-line reason. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && !(v === '' && key !== 'SERVICE_LOG_LEVELS' && key !== 'SERVICE_OUTBOUND_ALLOW_CIDRS'))
      raw[key] = v;
  }
  if (raw.SERVICE_SECRET_KEY === undefined)
    throw new ConfigurationError(
      'SERVICE_SECRET_KEY is required (32+ random bytes; generate one with: openssl rand -hex 32)',
    );
  const withDefaults = Value.Default(EnvSchema, raw) as Static<typeof EnvSchema>;
  const errors = [...Value.Errors(EnvSchema, withDefaults)];
  if (errors.length) {
    const e = errors[0]!;
    const name = e.instancePath.replace(/^\//, '') || 'environment';
    throw new ConfigurationError(`${name} is invalid: ${e.message}`);
  }
  const e = withDefaults;
  const weak = weakSecretKeyReason(e.SERVICE_SECRET_KEY);
  if (weak) throw new ConfigurationError(weak);

  const corsOrigins = e.SERVICE_CORS_ALLOWED_ORIGINS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (corsOrigins.some((o) => o.includes('*')))
    throw new ConfigurationError(
      'SERVICE_CORS_ALLOWED_ORIGINS must not contain "*" because credentials are enabled; list the origins explicitly',
    );
  for (const o of corsOrigins) {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new ConfigurationError(`SERVICE_CORS_ALLOWED_ORIGINS has an invalid origin "${o}"`);
    }
    if (u.origin !== o.replace(/\/$/, ''))
      throw new ConfigurationError(
        `SERVICE_CORS_ALLOWED_ORIGINS entry "${o}" must be an origin (scheme://host[:port]) without a path`,
      );
  }
  const forwardedAllowIps = e.SERVICE_FORWARDED_ALLOW_IPS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    parseCidrList(forwardedAllowIps.filter((x) => x !== '*'));
  } catch (err) {
    throw new ConfigurationError(`SERVICE_FORWARDED_ALLOW_IPS: ${(err as Error).message}`);
  }
  const outboundAllowCidrs = e.SERVICE_OUTBOUND_ALLOW_CIDRS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    parseCidrList(outboundAllowCidrs);
  } catch (err) {
    throw new ConfigurationError(`SERVICE_OUTBOUND_ALLOW_CIDRS: ${(err as Error).message}`);
  }

  const logLevels: Record<string, LevelName> = {};
  for (const pair of e.SERVICE_LOG_LEVELS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9_.:-]+)=([A-Za-z]+)$/.exec(pair);
    if (!m) throw new ConfigurationError(`SERVICE_LOG_LEVELS entry "${pair}" must look like name=LEVEL`);
    logLevels[m[1]!] = level('SERVICE_LOG_LEVELS', m[2]!);
  }

  const dataDir = path.resolve(e.SERVICE_DATA_DIR);
  let databaseUrl = e.SERVICE_DATABASE_URL ?? `sqlite:${path.join(dataDir, 'herald.db')}`;
  const dialect = /^postgres(ql)?:\/\//.test(databaseUrl) ? 'postgresql' : 'sqlite';
  let sqlitePath: string | undefined;
  if (dialect === 'sqlite') {
    sqlitePath = databaseUrl.replace(/^sqlite:(\/\/)?/, '');
    if (!sqlitePath) throw new ConfigurationError('SERVICE_DATABASE_URL sqlite: needs a file path');
    sqlitePath = path.resolve(dataDir, sqlitePath);
    databaseUrl = `sqlite:${sqlitePath}`;
  }
  if (
    e.SERVICE_MESSAGING_WEBHOOK_SECRET !== undefined &&
    !/^[A-Za-z0-9_-]{16,256}$/.test(e.SERVICE_MESSAGING_WEBHOOK_SECRET)
  ) {
    throw new ConfigurationError(
      'SERVICE_MESSAGING_WEBHOOK_SECRET must be 16-256 characters of A-Z, a-z, 0-9, _ and - (characters ' +
        'bot services accept in a webhook secret)',
    );
  }
  const port = Number(e.SERVICE_PORT);
  if (port > 65535) throw new ConfigurationError(`SERVICE_PORT must be 0-65535, got ${port}`);
  if (!validZone(e.SERVICE_QUOTA_TIMEZONE))
    throw new ConfigurationError(`SERVICE_QUOTA_TIMEZONE "${e.SERVICE_QUOTA_TIMEZONE}" is not an IANA time zone`);
  const smtp = smtpConfig(e, port);

  const plugins =
    e.SERVICE_PLUGINS !== undefined
      ? e.SERVICE_PLUGINS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [...FIRST_PARTY_PLUGINS];
  for (const name of [...ALWAYS_LOADED_PLUGINS].reverse()) if (!plugins.includes(name)) plugins.unshift(name);

  return {
    secretKey: e.SERVICE_SECRET_KEY,
    previousSecretKey: e.SERVICE_SECRET_KEY_PREVIOUS,
    corsOrigins,
    forwardedAllowIps,
    dataDir,
    databaseUrl,
    dialect,
    sqlitePath,
    debug: bool('SERVICE_DEBUG', e.SERVICE_DEBUG),
    logFormat: e.SERVICE_LOG_FORMAT,
    logLevel: level('SERVICE_LOG_LEVEL', e.SERVICE_LOG_LEVEL),
    logLevels,
    eventLogRetentionDays: Number(e.SERVICE_EVENT_LOG_RETENTION_DAYS),
    preMigrateSnapshotKeep: Number(e.SERVICE_PRE_MIGRATE_SNAPSHOT_KEEP),
    metricsEnabled: bool('SERVICE_METRICS_ENABLED', e.SERVICE_METRICS_ENABLED),
    dispatchThread: bool('SERVICE_DISPATCH_THREAD', e.SERVICE_DISPATCH_THREAD),
    gracefulShutdownSeconds: Number(e.SERVICE_GRACEFUL_SHUTDOWN_SECONDS),
    supervisedOverride:
      e.SERVICE_SUPERVISED === undefined || e.SERVICE_SUPERVISED.trim().toLowerCase() === 'auto'
        ? undefined
        : bool('SERVICE_SUPERVISED', e.SERVICE_SUPERVISED),
    messagingWebhookSecret: e.SERVICE_MESSAGING_WEBHOOK_SECRET,
    host: e.SERVICE_HOST,
    port,
    publicUrl: e.SERVICE_PUBLIC_URL?.replace(/\/$/, ''),
    plugins,
    pluginDir: path.resolve(dataDir, e.SERVICE_PLUGIN_DIR ?? 'plugins'),
    outboundAllowCidrs,
    quotaTimezone: e.SERVICE_QUOTA_TIMEZONE,
    userStorageMb: Number(e.SERVICE_USER_STORAGE_MB),
    ai: {
      baseUrl: e.AI_BASE_URL,
      apiKey: e.AI_API_KEY || undefined,
      model: e.AI_MODEL,
      contextTokens: Number(e.AI_CONTEXT_TOKENS),
      maxToolRounds: Math.min(20, Number(e.AI_MAX_TOOL_ROUNDS)),
    },
    ...(smtp ? { smtp } : {}),
  };
}
