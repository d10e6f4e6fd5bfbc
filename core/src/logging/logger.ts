import { createRequire } from 'node:module';
import type { DestinationStream, Logger } from 'pino';
import pino from 'pino';
import type Pretty from 'pino-pretty';
import type { LevelName } from '../config/config.ts';
import { CredentialPaths } from './credential-paths.ts';
import { redactObject, redactText, SecretValues } from './redact.ts';

export type { Logger };

export interface LoggerOptions {
  format: 'text' | 'json';
  level: LevelName;
  levels?: Record<string, LevelName>;
  /** Where lines go; standard error unless a test captures them. */
  destination?: DestinationStream | NodeJS.WritableStream;
  secrets?: SecretValues;
}

export interface LoggerFactory {
  root: Logger;
  /** A module logger whose level follows SERVICE_LOG_LEVELS (`name=LEVEL`). */
  get(module: string, bindings?: Record<string, unknown>): Logger;
  secrets: SecretValues;
  /** Credential path segments masked in every logged request URL; the HTTP server fills it from its routes. */
  credentialPaths: CredentialPaths;
}

/**
 * pino to standard error. Every line passes through key-based redaction (any field named like a
 * secret) and value-based masking (the run's known secret values), including the message text.
 */
export function createLogger(opts: LoggerOptions): LoggerFactory {
  const secrets = opts.secrets ?? new SecretValues();
  const credentialPaths = new CredentialPaths();
  const scrub = (s: string) => secrets.mask(redactText(s));
  // In text the request line's message says it all (method, URL, status, time): its req, res and
  // responseTime fields, there for JSON consumers, would only repeat it over nine more lines.
  const dest =
    opts.destination ??
    (opts.format === 'text'
      ? loadPretty()({
          destination: 2,
          sync: true,
          colorize: false,
          translateTime: 'SYS:standard',
          ignore: 'pid,hostname,req,res,responseTime',
        })
      : pino.destination({ fd: 2, sync: true }));
  // Stacks go into JSON lines and into text at DEBUG; a text log at INFO keeps errors to one line
  // each (type, message, code), readable by a person, and DEBUG brings the stacks back.
  const keepStack = opts.format === 'json' || ORDER.indexOf(lowest(opts.level, opts.levels)) <= ORDER.indexOf('debug');
  const serializers = {
    err: (e: Error) => {
      if (!(e instanceof Error)) return e; // already serialized before redaction
      const s = pino.stdSerializers.err(e);
      // `code` is often a getter or non-enumerable (Node system errors, database drivers): take it by name.
      const code = (e as { code?: unknown }).code;
      return {
        ...s,
        message: scrub(s.message ?? ''),
        ...(code !== undefined ? { code } : {}),
        stack: keepStack && s.stack ? scrub(s.stack) : undefined,
      };
    },
    req: (req: { method?: string; url?: string; ip?: string; id?: string }) => ({
      id: req.id,
      method: req.method,
      url: req.url ? scrub(credentialPaths.mask(req.url)) : req.url,
      ip: req.ip,
    }),
    res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
  };
  // pino runs `formatters.log` before its serializers, and redaction copies only plain data: an
  // Error or a request object would arrive as `{}`. Serialize the known keys first, then redact.
  const serialize = (obj: Record<string, unknown>): Record<string, unknown> => {
    let out = obj;
    for (const key of ['err', 'req', 'res'] as const) {
      const v = obj[key];
      if (v && typeof v === 'object') {
        if (out === obj) out = { ...obj };
        out[key] = serializers[key](v as never);
      }
    }
    return out;
  };
  const root = pino(
    {
      level: lowest(opts.level, opts.levels),
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => scrubStrings(JSON.parse(safeStringify(redactObject(serialize(obj)))), scrub),
        bindings: (b) => redactObject(b),
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrub(a) : a));
          return method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
      serializers,
    },
    dest as DestinationStream,
  );
  root.level = opts.level;
  const levels = opts.levels ?? {};
  return {
    root,
    secrets,
    credentialPaths,
    get(module, bindings = {}) {
      const level = levels[module] ?? matchPrefix(levels, module) ?? opts.level;
      return root.child({ module, ...bindings }, { level });
    },
  };
}

/** pino-pretty (CommonJS) is required only for the text format, so a JSON-logging service never loads it. */
function loadPretty(): typeof Pretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof Pretty;
}

function matchPrefix(levels: Record<string, LevelName>, module: string): LevelName | undefined {
  let best: string | undefined;
  for (const k of Object.keys(levels)) if (module.startsWith(`${k}.`) && (!best || k.length > best.length)) best = k;
  return best ? levels[best] : undefined;
}

const ORDER: LevelName[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
function lowest(root: LevelName, levels: Record<string, LevelName> = {}): LevelName {
  return [root, ...Object.values(levels)].reduce((a, b) => (ORDER.indexOf(b) < ORDER.indexOf(a) ? b : a));
}

/** JSON text of a log object; cycles and exotic objects (sockets, streams) become short markers. */
/**
 * Scrubs every string inside already-plain JSON data, one string at a time: scrubbing the JSON
 * text as a whole could eat a closing quote along with a masked value and break the line.
 */
function scrubStrings<T>(value: T, scrub: (s: string) => string): T {
  if (typeof value === 'string') return scrub(value) as T;
  if (Array.isArray(value)) return value.map((v) => scrubStrings(v, scrub)) as T;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = scrubStrings(o[k], scrub);
  }
  return value;
}

function safeStringify(obj: unknown): string {
  const seen = new WeakSet<object>();
  return (
    JSON.stringify(obj, (_k, v) => {
      if (typeof v === 'bigint') return v.toString();
      if (v && typeof v === 'object') {
        if (seen.has(v)) return '[Circular]';
        seen.add(v);
        const proto = Object.getPrototypeOf(v);
        if (
          proto !== Object.prototype &&
          proto !== Array.prototype &&
          proto !== null &&
          !(v instanceof Error) &&
          typeof (v as { toJSON?: unknown }).toJSON !== 'function'
        )
          return `[${proto?.constructor?.name ?? 'Object'}]`;
      }
      return v;
    }) ?? '{}'
  );
}
