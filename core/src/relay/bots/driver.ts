/** Finding a bot kind's driver and the context it runs with. */
import type { Core } from '../../core.ts';
import { bindCredentials } from '../../net/outbound.ts';
import type { BotDriverContext, MessagingBotDriver } from '../../plugin-api/index.ts';
import type { BotDbRow } from '../definitions/bot.ts';

/** Time allowed for one short call to the bot service (getMe, setWebhook, a reply). */
export const BOT_CALL_TIMEOUT_MS = 15_000;

/** A bot record as the runtime reads it from the `bots` table (defined with the bot, definitions/bot.ts). */
export type BotRow = BotDbRow;

/** The driver of a bot kind: the target plugin of that id provides it, or nothing does. */
export function botDriver(core: Core, kind: string): MessagingBotDriver | undefined {
  return core.plugins.target(kind)?.def.botDriver;
}

/** Bot kinds this service can run (enabled target plugins that ship a bot driver). */
export function botKinds(core: Core): string[] {
  return [...core.plugins.plugins.values()]
    .filter((p) => p.kind === 'target' && (p.def as { botDriver?: unknown }).botDriver)
    .map((p) => p.id)
    .sort();
}

/** The drivers of every bot kind this service can run. */
export function botDrivers(core: Core): MessagingBotDriver[] {
  return botKinds(core)
    .map((k) => botDriver(core, k))
    .filter((d): d is MessagingBotDriver => Boolean(d));
}

/**
 * What a driver call runs with. The outbound client is bound to the bot's token (and to the
 * credential headers its plugin declares), so a redirect to another origin never carries the
 * token along: Telegram puts it in every URL path.
 */
export function driverContext(
  core: Core,
  bot?: { kind?: string; token?: string; api_root?: string | null },
): BotDriverContext {
  const headers = bot?.kind ? core.plugins.target(bot.kind)?.def.manifest.credentialHeaders : undefined;
  const http =
    bot?.token || headers ? bindCredentials(core.outbound, { headers, secrets: [bot?.token] }) : core.outbound;
  return { http, log: core.logs.get('bots'), apiRoot: bot?.api_root ?? undefined };
}

/** Registers a bot token as a secret value so it is masked in every log line and error text. */
export function rememberToken(core: Core, token: string): void {
  core.logs.secrets.add(token);
}

/** An error message fit to store and show: the driver masks tokens already; known secrets are masked again. */
export function safeMessage(core: Core, err: unknown): string {
  return core.logs.secrets.mask((err as Error)?.message ?? String(err));
}

/** Base URL the bot service reaches us at (SERVICE_PUBLIC_URL, or the listening address). */
export function publicBase(core: Core): string {
  const probe = core.plugins.webhookUrl({ webhook_token: 'x' });
  return probe.slice(0, -'/api/hooks/x'.length);
}

export const botWebhookUrl = (core: Core, pathId: string): string => `${publicBase(core)}/api/bots/${pathId}/webhook`;

/** A signal that aborts after `ms` or when `parent` aborts. */
export function deadline(ms: number, parent?: AbortSignal): AbortSignal {
  return parent ? AbortSignal.any([parent, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms);
}
