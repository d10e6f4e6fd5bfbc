import { createService, SHUTDOWN_MARGIN_MS } from './app.ts';
import { ConfigurationError, loadConfig } from './config/config.ts';
import { gcThreadsNiceFromEnv, lowerGcThreadPriority } from './health/gc-threads.ts';
import { PluginLoadError } from './plugins/loader.ts';

/**
 * The service's process (entered through main.ts): refuse bad configuration in one line, run until a signal, exit 0.
 */
async function main(): Promise<void> {
  let config;
  let gcNice: number | undefined;
  try {
    config = loadConfig();
    gcNice = gcThreadsNiceFromEnv();
  } catch (err) {
    if (err instanceof ConfigurationError) {
      process.stderr.write(`herald: refusing to start: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  let service;
  try {
    service = await createService(config);
    if (gcNice !== undefined) {
      // V8's helper threads behind the main thread (core/src/health/gc-threads.ts).
      const lowered = lowerGcThreadPriority(gcNice);
      const log = service.core.logs.get('memory');
      if (lowered.error && !lowered.unsupported)
        log.warn({ ...lowered, by: gcNice }, 'could not lower the priority of V8 helper threads');
      else log.debug({ ...lowered, by: gcNice }, 'V8 helper threads at a lower priority');
    }
    await service.listen();
  } catch (err) {
    if (err instanceof ConfigurationError || err instanceof PluginLoadError) {
      process.stderr.write(`herald: refusing to start: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`herald: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  let signalled = false;
  const onSignal = (sig: string) => {
    if (signalled) return;
    signalled = true;
    // Whatever holds the stop up (a plugin that ignores its abort signal), the process is gone
    // shortly after the grace period: the supervisor, or the operator, waits no longer.
    setTimeout(
      () => {
        process.stderr.write('herald: shutdown did not finish within the grace period; exiting\n');
        process.exit(process.exitCode ?? 1);
      },
      service.core.config.gracefulShutdownSeconds * 1000 + SHUTDOWN_MARGIN_MS,
    ).unref();
    void service.stop().then(
      () => process.exit(process.exitCode ?? 0),
      (err) => {
        process.stderr.write(`herald: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
    void sig;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  service.core.services.set('requestRestart', () => {
    process.exitCode = 75;
    onSignal('restart');
  });
}

void main();
