import { createService, type Service, SHUTDOWN_MARGIN_MS } from './app.ts';
import { ConfigurationError, loadConfig } from './config/config.ts';
import { gcThreadsNiceFromEnv, lowerGcThreadPriority } from './health/gc-threads.ts';
import { installProcessErrorHandlers } from './lifecycle/process-errors.ts';
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
  let service: Service | undefined;
  // Installed before the service is built: a signal at any point of the start (migrations, plugins, the port bound
  // while jobs and features still start) ends in the graceful stop, not in the signal's default action.
  let signalled = false;
  const onSignal = () => {
    if (signalled) return;
    signalled = true;
    // Whatever holds the stop up (a plugin that ignores its abort signal), the process is gone
    // shortly after the grace period: the supervisor, or the operator, waits no longer.
    setTimeout(
      () => {
        process.stderr.write('herald: shutdown did not finish within the grace period; exiting\n');
        process.exit(process.exitCode ?? 1);
      },
      config.gracefulShutdownSeconds * 1000 + SHUTDOWN_MARGIN_MS,
    ).unref();
    // Before the service exists, the start sees `signalled` once createService returns and stops it there.
    if (service) stopAndExit(service);
  };
  // SIGHUP too: the terminal that ran `npm start` closed. There is no configuration to reload (it comes from the
  // environment), and the graceful stop is better than the signal's default end.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', onSignal);
  try {
    service = await createService(config);
    // From here on, an error nothing handled goes through the service's logger (lifecycle/process-errors.ts).
    installProcessErrorHandlers(service.core.logs.get('core'));
    if (signalled) {
      // Built but never listened: its stop closes the database and the plugin instances.
      stopAndExit(service);
      return;
    }
    if (gcNice !== undefined) {
      // V8's helper threads behind the main thread (core/src/health/gc-threads.ts).
      const lowered = lowerGcThreadPriority(gcNice);
      const log = service.core.logs.get('memory');
      if (lowered.error && !lowered.unsupported)
        log.warn({ ...lowered, by: gcNice }, 'could not lower the priority of V8 helper threads');
      else log.debug({ ...lowered, by: gcNice }, 'V8 helper threads at a lower priority');
    }
    // A signal during listen() stops the service once its start has ended (Service.stop waits for it).
    await service.listen();
  } catch (err) {
    // A start that a signal's stop interrupted is not a failure: stopAndExit exits.
    if (signalled && service) return;
    if (err instanceof ConfigurationError || err instanceof PluginLoadError) {
      process.stderr.write(`herald: refusing to start: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`herald: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  service.core.services.set('requestRestart', () => {
    process.exitCode = 75;
    onSignal();
  });
}

function stopAndExit(service: Service): void {
  void service.stop().then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      process.stderr.write(`herald: shutdown failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

void main();
