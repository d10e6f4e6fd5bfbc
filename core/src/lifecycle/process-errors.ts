import type { Logger } from 'pino';

/** The exit code after an uncaught exception: EX_SOFTWARE (sysexits.h), an internal error. */
export const CRASH_EXIT_CODE = 70;

/**
 * The process's last line of defence, installed by run.ts once the service's logger exists: an error nothing
 * handled is logged through that logger (JSON or text as configured, secrets masked like every other line) instead of
 * Node's raw stack trace on standard error, which no redaction sees.
 *
 * - A promise rejection nothing handled (a plugin's fire-and-forget call that failed, say) is logged at ERROR and the
 *   service goes on: one stray failure does not stop every provider, target and chat for the restart's duration.
 * - An exception nothing caught leaves the process in a state nobody planned for: it is logged at FATAL and the
 *   process exits at once with {@link CRASH_EXIT_CODE}, without the graceful stop (a supervisor restarts it; what was
 *   accepted is durable). Not 1, which a refused start exits with, so that a supervisor can tell the two apart.
 * - A warning Node emits from then on is logged at WARNING, instead of its own line on standard error.
 *
 * The dispatch thread (SERVICE_DISPATCH_THREAD) has none of these: whatever ends it is logged by the main thread, which
 * starts it again (relay/pipeline/dispatch-worker-host.ts).
 */
export function installProcessErrorHandlers(log: Logger): void {
  const onRejection = (reason: unknown) => {
    log.error({ err: asError(reason) }, 'unhandled promise rejection; the service goes on');
  };
  const onException = (err: unknown, origin: string) => {
    // pino writes standard error synchronously here (logging/logger.ts), so the line is out before the exit.
    log.fatal({ err: asError(err), origin }, 'uncaught exception; the service exits');
    process.exit(CRASH_EXIT_CODE);
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  // Node's own warnings (a listener leak, a deprecation) too: its default printer is a listener of this event, which
  // is replaced by one that logs through the logger.
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) => {
    log.warn({ warning: { name: w.name, code: w.code, message: w.message } }, 'Node warning');
  });
}

/** A rejection may carry anything; the log's error serializer wants an Error. */
function asError(v: unknown): Error {
  return v instanceof Error ? v : new Error(`non-error value: ${typeof v === 'string' ? v : String(v)}`);
}
