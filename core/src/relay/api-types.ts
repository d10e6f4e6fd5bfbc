/**
 * The web client's source of the relay API's types: type-only exports of the response schemas the
 * relay's routes declare (and serialize by), so that the client reads what the server sends.
 * `core/web/src/lib/types.ts` re-exports them. Keep the names stable; add, do not rename.
 */
import type { Static } from 'typebox';
import type {
  ActionCreateBody as ActionCreateBodySchema,
  ActionPatchBody as ActionPatchBodySchema,
  ActionView,
  SchedulePreview as SchedulePreviewSchema,
} from './definitions/action.ts';
import type { BotChatView, BotView } from './definitions/bot.ts';
import type {
  DeferredView,
  DeliveryHistoryView,
  DeliveryView,
  EventView,
  ReplayPreview as ReplayPreviewSchema,
  ReplayQueued as ReplayQueuedSchema,
  ResendAnswer as ResendAnswerSchema,
  SettleAnswer as SettleAnswerSchema,
} from './definitions/event.ts';
import type { PluginEventView, PluginInfoView } from './definitions/plugin.ts';
import type {
  ConnectionValueView,
  ProviderCreateBody as ProviderCreateBodySchema,
  ProviderPatchBody as ProviderPatchBodySchema,
  ProviderView,
} from './definitions/provider.ts';
import type {
  PushSubscriptionList,
  PushSubscriptionView,
  PushTestOutcome as PushTestOutcomeSchema,
  VapidPublicKey as VapidPublicKeySchema,
} from './definitions/push.ts';
import type {
  SelfMonitoringPatchBody as SelfMonitoringPatchSchema,
  SelfMonitoringView,
} from './definitions/self-monitoring.ts';
import type {
  TargetCreateBody as TargetCreateBodySchema,
  TargetPatchBody as TargetPatchBodySchema,
  TargetSettings as TargetSettingsT,
  TargetView,
} from './definitions/target.ts';
import type {
  SavedTemplate as SavedTemplateSchema,
  TemplateCatalogEntry as TemplateCatalogEntrySchema,
  TemplateCatalog as TemplateCatalogSchema,
  TemplatePreview as TemplatePreviewSchema,
  TemplateText as TemplateTextSchema,
} from './definitions/template.ts';
import type { TrackerLinkView, TrackerView } from './definitions/tracker.ts';
import type { WebhookLogEntryView } from './definitions/webhook-log.ts';
import type { OutboundAllowItem, OutboundAllowList } from './routes/admin-outbound.ts';
import type { StatsAnswer } from './routes/stats.ts';
import type { ParsedUrl as ParsedUrlSchema, TestOutcome as TestOutcomeSchema } from './routes/targets.ts';
import type { TestEventResult } from './routes/test-events.ts';

/** A target: `GET /api/targets`, `GET, PATCH /api/targets/{id}`, `POST /api/targets`, `POST /api/targets/from-url`. */
export type Target = Static<typeof TargetView>;
export type TargetSettings = TargetSettingsT;
export type TargetCreateBody = Static<typeof TargetCreateBodySchema>;
export type TargetPatchBody = Static<typeof TargetPatchBodySchema>;
/** `POST /api/targets/parse-url`: the target an Apprise URL describes. */
export type ParsedTargetUrl = Static<typeof ParsedUrlSchema>;
/** The outcome of a test send (`POST /api/targets/{id}/test`). */
export type TestOutcome = Static<typeof TestOutcomeSchema>;

/** A tracker: `GET /api/trackers`, `GET, PATCH /api/trackers/{id}`, `POST /api/trackers`. */
export type Tracker = Static<typeof TrackerView>;
/** A tracker-target link: `PUT /api/trackers/{id}/targets/{target_id}`. */
export type TrackerLink = Static<typeof TrackerLinkView>;

/**
 * A provider: `GET /api/providers`, `GET, PATCH /api/providers/{id}`, `POST /api/providers`; besides
 * these fields, the top-level config aliases its plugin declares.
 */
export type Provider = Static<typeof ProviderView>;
export type ProviderCreateBody = Static<typeof ProviderCreateBodySchema>;
export type ProviderPatchBody = Static<typeof ProviderPatchBodySchema>;
/** One value to paste into the sending app (`webhook_connection`). */
export type ConnectionValue = Static<typeof ConnectionValueView>;
/** One webhook request a provider or bot received (`GET /api/providers/{id}/webhook-log`, `entries`). */
export type WebhookLogEntry = Static<typeof WebhookLogEntryView>;

/** `GET, PATCH /api/self-monitoring`. */
export type SelfMonitoring = Static<typeof SelfMonitoringView>;
export type SelfMonitoringPatch = Static<typeof SelfMonitoringPatchSchema>;

/** An event with its deliveries and their history: `GET /api/events` (`events`), `GET /api/events/{id}`. */
export type EventRow = Static<typeof EventView>;
export type Delivery = Static<typeof DeliveryView>;
export type DeliveryHistory = Static<typeof DeliveryHistoryView>;
/** A delivery held back by quiet hours: `GET /api/deferred` (`deferred`). */
export type DeferredDelivery = Static<typeof DeferredView>;
export type ResendAnswer = Static<typeof ResendAnswerSchema>;
export type SettleAnswer = Static<typeof SettleAnswerSchema>;
/** `POST /api/events/replay`: a dry run's preview, or what was queued. */
export type ReplayPreview = Static<typeof ReplayPreviewSchema>;
export type ReplayQueued = Static<typeof ReplayQueuedSchema>;

/** A scheduled action: `GET /api/actions`, `GET, PATCH /api/actions/{id}`, `POST /api/actions`, `.../run`. */
export type Action = Static<typeof ActionView>;
export type ActionCreateBody = Static<typeof ActionCreateBodySchema>;
export type ActionPatchBody = Static<typeof ActionPatchBodySchema>;
/** `GET /api/actions/schedule-preview`. */
export type SchedulePreview = Static<typeof SchedulePreviewSchema>;

/** A messaging bot (its token always masked): `GET /api/bots`, `GET, PATCH /api/bots/{id}`. */
export type Bot = Static<typeof BotView>;
/** A chat a bot has seen: `GET /api/bots/{id}/chats` (`chats`). */
export type BotChat = Static<typeof BotChatView>;

/** An enabled plugin: `GET /api/plugins` (`plugins`). */
export type PluginInfo = Static<typeof PluginInfoView>;
export type PluginEvent = Static<typeof PluginEventView>;

/** A subscribed browser: `GET, POST /api/push/subscriptions`. */
export type PushSubscription = Static<typeof PushSubscriptionView>;
export type PushSubscriptions = Static<typeof PushSubscriptionList>;
/** `POST /api/push/subscriptions/{id}/test`. */
export type PushTestOutcome = Static<typeof PushTestOutcomeSchema>;
/** `GET /api/push/vapid-public-key`. */
export type VapidPublicKey = Static<typeof VapidPublicKeySchema>;

/** `GET /api/templates`: every event type with its default and own templates. */
export type TemplateCatalog = Static<typeof TemplateCatalogSchema>;
export type TemplateCatalogEntry = Static<typeof TemplateCatalogEntrySchema>;
/** A template's title and body: `PUT /api/templates/{event_type}/{locale}`'s body, and each text of the catalog. */
export type TemplateText = Static<typeof TemplateTextSchema>;
/** `GET, POST /api/templates/{event_type}/preview`. */
export type TemplatePreview = Static<typeof TemplatePreviewSchema>;
/** `PUT /api/templates/{event_type}/{locale}`. */
export type SavedTemplate = Static<typeof SavedTemplateSchema>;

/** `POST /api/providers/{id}/test-event` and `/api/trackers/{id}/test-event`: the event and its deliveries. */
export type TestEventOutcome = Static<typeof TestEventResult>;
/** `GET /api/admin/outbound-allow`: one provider or target with its allow list; a page of them. */
export type OutboundAllowEntry = Static<typeof OutboundAllowItem>;
export type OutboundAllowPage = Static<typeof OutboundAllowList>;
/** `GET /api/stats`: events per day by status, and per target its success rate, p95 latency and failures. */
export type Stats = Static<typeof StatsAnswer>;
