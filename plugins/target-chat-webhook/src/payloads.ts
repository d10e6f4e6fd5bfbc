/**
 * The JSON each service's incoming webhook expects, built from a rendered message.
 *
 * Length rule: the manifest declares the strictest limit of the three services, so the pipeline
 * normally hands over a body that fits. If a body is still too long for the service, it is cut
 * (never split: a webhook has no idempotency key, so a retry after a partial split would repeat
 * the parts already posted) at the service limit, with a trailing ellipsis.
 */
import type { OutboundMessage, Severity } from '@herald/plugin-api';
import type { ChatFormat, ChatWebhookConfig } from './config.ts';

/** Per-service limits, in UTF-16 code units (never fewer than the services' own character counts). */
export const SERVICE_LIMITS = {
  /** Embed title 256, embed description 4096 (plain `content` would be 2000). */
  discord: { title: 256, body: 4096 },
  /** Slack truncates `text` beyond 40,000 characters but advises keeping messages under 4,000. */
  slack: { title: 4000, body: 4000 },
  /** One Mattermost post holds 16,383 characters (longer text is split into several posts by the server). */
  mattermost: { title: 16383, body: 16383 },
} as const satisfies Record<ChatFormat, { title: number; body: number }>;

/** The limit declared in the manifest: the strictest body limit across the services. */
export const MANIFEST_MAX_LENGTH = Math.min(...Object.values(SERVICE_LIMITS).map((l) => l.body));
export const MANIFEST_MAX_TITLE = Math.min(...Object.values(SERVICE_LIMITS).map((l) => l.title));

const SEVERITY_COLOURS: Record<Severity, number> = { info: 0x3b82f6, warning: 0xf59e0b, critical: 0xdc2626 };

export interface WebhookRequest {
  url: string;
  json: Record<string, unknown>;
  /** Characters cut to fit, 0 when nothing was. */
  truncated: number;
}

/** Cuts `text` to at most `max` code units, ending with an ellipsis and never splitting a surrogate pair. */
export function fit(text: string, max: number): { text: string; cut: number } {
  if (text.length <= max) return { text, cut: 0 };
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: `${text.slice(0, end)}…`, cut: text.length - end };
}

const isHttpUrl = (u: string | undefined): u is string => !!u && /^https?:\/\/\S+$/.test(u);

/** Slack mrkdwn needs only &, < and > escaped; everything else is literal. */
const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function discord(cfg: ChatWebhookConfig, m: OutboundMessage): WebhookRequest {
  const url = new URL(cfg.url);
  // wait=true makes Discord confirm the message was saved and return it (its id becomes remoteId).
  url.searchParams.set('wait', 'true');
  if (cfg.thread_id) url.searchParams.set('thread_id', cfg.thread_id);
  const title = fit(m.plainTitle, SERVICE_LIMITS.discord.title);
  const body = fit(m.body, SERVICE_LIMITS.discord.body);
  const embed: Record<string, unknown> = { color: SEVERITY_COLOURS[m.severity] };
  if (title.text) embed.title = title.text;
  if (body.text) embed.description = body.text;
  if (isHttpUrl(m.url)) embed.url = m.url;
  if (!title.text && !body.text) embed.description = '\u200b';
  return {
    url: url.href,
    json: {
      embeds: [embed],
      // Notification text must never ping @everyone or roles, whatever a payload contains.
      allowed_mentions: { parse: [] },
      ...(cfg.username ? { username: cfg.username } : {}),
      ...(cfg.icon_url ? { avatar_url: cfg.icon_url } : {}),
    },
    truncated: title.cut + body.cut,
  };
}

/** The line that opens a post updating an earlier one, in the target's language. */
export function updatePrefix(locale: string, previousTitle: string): string {
  return locale === 'ru' ? `Обновление к «${previousTitle}»:` : `Update to “${previousTitle}”:`;
}

function slack(cfg: ChatWebhookConfig, m: OutboundMessage, replyTo?: string): WebhookRequest {
  // Slack's mrkdwn is not Markdown (no backslash escapes, *single* bold), so build it from the plain text.
  const head =
    `${replyTo !== undefined ? `_${slackEscape(updatePrefix(m.locale, replyTo))}_\n` : ''}` +
    `${m.plainTitle ? `*${slackEscape(m.plainTitle)}*\n` : ''}`;
  const tail = isHttpUrl(m.url) && !m.plainBody.includes(m.url) ? `\n<${m.url}>` : '';
  const body = fit(slackEscape(m.plainBody), Math.max(0, SERVICE_LIMITS.slack.body - head.length - tail.length));
  const text = fit(`${head}${body.text}${tail}`, SERVICE_LIMITS.slack.body);
  return {
    url: cfg.url,
    json: {
      text: text.text || ' ',
      mrkdwn: true,
      ...(cfg.username ? { username: cfg.username } : {}),
      ...(cfg.icon_url ? { icon_url: cfg.icon_url } : {}),
    },
    truncated: body.cut + text.cut,
  };
}

/** Markdown special characters escaped, for text that must show literally (a quoted title). */
const markdownEscape = (s: string) => s.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');

function mattermost(cfg: ChatWebhookConfig, m: OutboundMessage, replyTo?: string): WebhookRequest {
  const head =
    `${replyTo !== undefined ? `_${updatePrefix(m.locale, markdownEscape(replyTo))}_\n\n` : ''}` +
    `${m.title ? `**${m.title}**\n\n` : ''}`;
  const tail = isHttpUrl(m.url) && !m.body.includes(m.url) ? `\n\n${m.url}` : '';
  const body = fit(m.body, Math.max(0, SERVICE_LIMITS.mattermost.body - head.length - tail.length));
  const text = fit(`${head}${body.text}${tail}`, SERVICE_LIMITS.mattermost.body);
  return {
    url: cfg.url,
    json: {
      text: text.text || ' ',
      ...(cfg.username ? { username: cfg.username } : {}),
      ...(cfg.icon_url ? { icon_url: cfg.icon_url } : {}),
      ...(cfg.channel ? { channel: cfg.channel } : {}),
      // Lets anyone reading posts through the API trace a post back to its delivery.
      props: {
        herald_delivery_id: m.deliveryId,
        herald_event_type: m.eventType,
        ...(replyTo !== undefined ? { herald_update: true } : {}),
      },
    },
    truncated: body.cut + text.cut,
  };
}

const BUILDERS: Record<ChatFormat, (cfg: ChatWebhookConfig, m: OutboundMessage, replyTo?: string) => WebhookRequest> = {
  discord,
  slack,
  mattermost,
};

/**
 * Builds the request for the configured service; `replyTo` (Slack, Mattermost) opens it with the earlier post's title.
 */
export function buildRequest(cfg: ChatWebhookConfig, message: OutboundMessage, replyTo?: string): WebhookRequest {
  return BUILDERS[cfg.format](cfg, message, replyTo);
}

/**
 * Discord's "Edit Webhook Message" (`PATCH /webhooks/{id}/{token}/messages/{message_id}`, in the
 * webhook's thread when one is configured): the same embed; name and avatar cannot change.
 */
export function buildEditRequest(cfg: ChatWebhookConfig, message: OutboundMessage, messageId: string): WebhookRequest {
  const req = discord(cfg, message);
  const url = new URL(cfg.url);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/messages/${encodeURIComponent(messageId)}`;
  if (cfg.thread_id) url.searchParams.set('thread_id', cfg.thread_id);
  const { username: _u, avatar_url: _a, ...json } = req.json;
  return { url: url.href, json, truncated: req.truncated };
}
