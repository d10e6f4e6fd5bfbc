/**
 * `SERVICE_DEBUG`'s SQL echo: every statement the service runs, as plain text, through the
 * service's logger at DEBUG (`{"sql": "..."}`, message `sql`, module `db`). Statements go out with
 * their `?` placeholders, never their values (which hold password hashes, sealed secrets and
 * users' text). Two paths lead to the database and both echo: MikroORM's (entity work, and every
 * raw statement on PostgreSQL) through {@link ormLoggerFactory}, and the native SQLite connection's
 * (sqlite-native.ts) through {@link NativeSqlite.echo}.
 */
import type { LogContext, LoggerNamespace, LoggerOptions, Logger as OrmLogger } from '@mikro-orm/core';
import type { Logger } from '../logging/logger.ts';

/** One line, without the indentation of a statement written over several. */
export const oneLine = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

/** Where an echoed statement goes. */
export const echoTo =
  (log: Logger) =>
  (sql: string, extra?: Record<string, unknown>): void => {
    log.debug({ sql: oneLine(sql), ...extra }, 'sql');
  };

/**
 * MikroORM's logger replaced by one writing to `log`: queries (when `debug` names `query`) as
 * `{ sql, took_ms }` without colour codes or parameter values; its other output at DEBUG, as before.
 */
export function ormLoggerFactory(log: Logger): (options: LoggerOptions) => OrmLogger {
  return (options) => {
    let debugMode = options.debugMode ?? false;
    const echo = echoTo(log);
    const isEnabled = (namespace: LoggerNamespace, context?: LogContext): boolean => {
      if (context?.enabled !== undefined) return context.enabled;
      const mode = context?.debugMode ?? debugMode;
      return !!mode && (!Array.isArray(mode) || mode.includes(namespace));
    };
    const write = (namespace: string, message: string, context?: LogContext) => {
      if (namespace !== 'deprecated' && !isEnabled(namespace as LoggerNamespace, context)) return;
      log.debug({ orm: namespace }, oneLine(message));
    };
    return {
      log: write,
      error: write,
      warn: write,
      isEnabled,
      setDebugMode(mode) {
        debugMode = mode;
      },
      logQuery(context) {
        const namespace = context.namespace ?? 'query';
        if (!context.query || !isEnabled(namespace, context)) return;
        echo(context.query, {
          ...(context.took != null ? { took_ms: context.took } : {}),
          ...(context.level === 'error' ? { failed: true } : {}),
        });
      },
    };
  };
}
