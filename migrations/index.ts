import core from './0001_core.ts';
import relay from './0002_relay.ts';
import assistant from './0003_assistant.ts';
import botApiRoot from './0004_bot_api_root.ts';
import providerAuthInConfig from './0005_provider_auth_in_config.ts';
import targetPacing from './0006_target_pacing.ts';
import botWebhookSecret from './0007_bot_webhook_secret.ts';
import tokenRevocation from './0008_token_revocation.ts';
import botWebhookLog from './0009_bot_webhook_log.ts';
import secretKeyCheck from './0010_secret_key_check.ts';
import deliveryHistory from './0013_delivery_history.ts';
import providerOutboundAllow from './0014_provider_outbound_allow.ts';
import testEvents from './0015_test_events.ts';
import memorySearch from './0017_memory_search.ts';
import documentChunks from './0018_document_chunks.ts';
import chatSearch from './0019_chat_search.ts';
import chatControls from './0020_chat_controls.ts';
import messageUpdates from './0021_message_updates.ts';
import targetOutboundAllow from './0022_target_outbound_allow.ts';
import quietDigest from './0023_quiet_digest.ts';
import eventWebhookColumns from './0024_event_webhook_columns.ts';
import messageShownAt from './0025_message_shown_at.ts';
import dropDeliveriesEventIndex from './0026_drop_deliveries_event_index.ts';
import webpush from './0027_webpush.ts';
import loginKnownAddresses from './0028_login_known_addresses.ts';
import assistantLab from './0029_assistant_lab.ts';
import userStorageLimit from './0030_user_storage_limit.ts';
import trackerDescription from './0031_tracker_description.ts';
import chatPinsFolders from './0032_chat_pins_folders.ts';
import eventLogFilterIndexes from './0033_event_log_filter_indexes.ts';
import eventLogUnsettledProvider from './0034_event_log_unsettled_provider.ts';
import deferredDispatchEvent from './0035_deferred_dispatch_event.ts';
import configVersion from './0036_config_version.ts';
import configVersionTargetStreak from './0037_config_version_target_streak.ts';
import type { Migration } from './types.ts';

/** Every migration, in order. Append new ones; never edit or reorder a released one. */
export const migrations: Migration[] = [
  core,
  relay,
  assistant,
  botApiRoot,
  providerAuthInConfig,
  targetPacing,
  botWebhookSecret,
  tokenRevocation,
  botWebhookLog,
  secretKeyCheck,
  deliveryHistory,
  providerOutboundAllow,
  testEvents,
  memorySearch,
  documentChunks,
  chatSearch,
  chatControls,
  messageUpdates,
  targetOutboundAllow,
  quietDigest,
  eventWebhookColumns,
  messageShownAt,
  dropDeliveriesEventIndex,
  webpush,
  loginKnownAddresses,
  assistantLab,
  userStorageLimit,
  trackerDescription,
  chatPinsFolders,
  eventLogFilterIndexes,
  eventLogUnsettledProvider,
  deferredDispatchEvent,
  configVersion,
  configVersionTargetStreak,
];
