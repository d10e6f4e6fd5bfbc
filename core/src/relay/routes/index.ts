/**
 * The relay's record routes: plugins, providers, trackers and their links, targets, events, deferred, templates,
 * self-monitoring, actions, bots.
 */

import type { Core } from '../../core.ts';
import type { App } from '../../http/server.ts';
import { pushRoutes } from '../push/routes.ts';
import { actionRoutes } from './actions.ts';
import { adminEventRoutes } from './admin-events.ts';
import { adminOutboundRoutes } from './admin-outbound.ts';
import { botWebhookRoutes } from './bot-webhook.ts';
import { botRoutes } from './bots.ts';
import { eventRoutes } from './events.ts';
import { pluginRoutes } from './plugins.ts';
import { providerRoutes } from './providers.ts';
import { selfMonitoringRoutes } from './self-monitoring.ts';
import { statsRoutes } from './stats.ts';
import { targetRoutes } from './targets.ts';
import { templateRoutes } from './templates.ts';
import { testEventRoutes } from './test-events.ts';
import { trackerLinkRoutes } from './tracker-links.ts';
import { trackerRoutes } from './trackers.ts';

/**
 * Registers every relay record route on the app. Every route but the bot webhook needs a logged-in user and sees only
 * that user's rows.
 */
export async function registerRelayRoutes(app: App, core: Core): Promise<void> {
  await pluginRoutes(app, core);
  await providerRoutes(app, core);
  await trackerRoutes(app, core);
  await trackerLinkRoutes(app, core);
  await targetRoutes(app, core);
  await eventRoutes(app, core);
  await templateRoutes(app, core);
  await selfMonitoringRoutes(app, core);
  await actionRoutes(app, core);
  await testEventRoutes(app, core);
  await botRoutes(app, core);
  await botWebhookRoutes(app, core);
  await adminOutboundRoutes(app, core);
  await adminEventRoutes(app, core);
  await pushRoutes(app, core);
  await statsRoutes(app, core);
}
