/** The messaging-bot runtime, started by the relay feature once the server listens. */
import type { Core } from '../../core.ts';
import { botRuntime } from './runtime.ts';

export { BotRuntime, botRuntime } from './runtime.ts';

/**
 * Starts polling loops for polling-mode bots on the scheduler leader and follows leadership.
 * Throws ConfigurationError (boot refused) when a webhook-mode bot exists and
 * SERVICE_MESSAGING_WEBHOOK_SECRET is not set. Resolves with a stop function.
 */
export async function startBots(core: Core): Promise<() => Promise<void>> {
  const runtime = botRuntime(core);
  await runtime.start();
  return () => runtime.stop();
}
