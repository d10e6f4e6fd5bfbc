/**
 * One inbound delivery, once its signature passed: its replay key, then the event's normalizer.
 * Deliveries the provider has no event type for are acknowledged with `{ ignored: true }`.
 */

import type { InboundWebhook, PluginLogger, WebhookResult } from '@herald/plugin-api';
import { readBody } from './body.ts';
import type { CodehostConfig } from './config.ts';
import type { DeliveryInfo } from './headers.ts';
import { deliveryInfo } from './headers.ts';
import type { Obj, Outcome } from './normalize/common.ts';
import { ignore } from './normalize/common.ts';
import { normalizeIssue, normalizeIssueComment } from './normalize/issues.ts';
import { normalizePullRequest } from './normalize/pull-request.ts';
import { normalizePush } from './normalize/push.ts';
import { normalizeRelease } from './normalize/release.ts';
import { normalizeForgejoActionRun, normalizeWorkflowRun } from './normalize/workflow.ts';

/** How long a delivery id is remembered; hosts redeliver within days, not weeks. */
export const REPLAY_TTL_SECONDS = 7 * 24 * 3600;

export interface HandlerDeps {
  config: CodehostConfig;
  log: PluginLogger;
}

function route(info: DeliveryInfo, body: Obj, cfg: CodehostConfig): Outcome {
  switch (info.event) {
    case 'push':
      return normalizePush(body, cfg.branches);
    case 'pull_request':
      return normalizePullRequest(body);
    case 'issues':
      return normalizeIssue(body);
    // Gitea and Forgejo send comments on pull requests as issue_comment too (with is_pull).
    case 'issue_comment':
      return normalizeIssueComment(body);
    case 'release':
      return normalizeRelease(body);
    case 'workflow_run':
      return normalizeWorkflowRun(body);
    default:
      if (info.event.startsWith('action_run')) return normalizeForgejoActionRun(body, info.eventType ?? info.event);
      return ignore(`event ${info.event}`);
  }
}

/** A delivery whose signature the core already had checked (`verifySignature`, the plugin's `verifyWebhook`). */
export async function handleDelivery(deps: HandlerDeps, req: InboundWebhook): Promise<WebhookResult> {
  const { config, log } = deps;
  const info = deliveryInfo(config.host, req);
  // The core refuses a delivery id it holds (409, contract 1.4.0) and stores the key only once the events are
  // durable, so a delivery that failed can be redelivered.
  const replayKey = { key: `delivery:${info.deliveryId}`, ttlSeconds: REPLAY_TTL_SECONDS };
  const body = readBody(req);
  if (info.event === 'ping') return { status: 200, body: { ok: true }, events: [], replayKey };
  const outcome = route(info, body, config);
  if ('ignored' in outcome) {
    log.debug({ event: info.event, delivery: info.deliveryId, reason: outcome.ignored }, 'delivery ignored');
    return { status: 200, body: { ignored: true, reason: outcome.ignored }, events: [], replayKey };
  }
  return { events: outcome.events, replayKey };
}
