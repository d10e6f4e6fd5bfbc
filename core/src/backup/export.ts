/**
 * Collects the configuration a backup holds: users, the relay's records (providers with their
 * self-monitoring columns, trackers, targets, links, bots, chats, actions, templates), the
 * assistant's operator configuration (skills, primary and personal contexts, the models users may
 * choose and the default) and the operator settings. Never event_log, deferred_dispatch,
 * deliveries, webhook payload logs, chats with the assistant, memory, documents or reports.
 *
 * With `secrets_mode = exclude`, every secret is left out and its place listed in the record's
 * `secrets_omitted` (JSON pointers): plugin `Secret()` fields, provider webhook tokens, bot tokens
 * and webhook paths, and password hashes. With `include`, plugin secrets and bot tokens travel
 * sealed, as stored (see `sealed.ts`).
 */

import type { SkillRow } from '../assistant/definitions/skill.ts';
import { readModelSettings } from '../assistant/model-settings.ts';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { outboundAllowOf } from '../plugins/host.ts';
import { type ActionDbRow, actionSettingsOf } from '../relay/definitions/action.ts';
import { type BotChatDbRow, type BotDbRow, botChatFieldsOf, botFieldsOf } from '../relay/definitions/bot.ts';
import { type ProviderDbRow, providerSettingsOf } from '../relay/definitions/provider.ts';
import { selfMonitoringSettingsOf } from '../relay/definitions/self-monitoring.ts';
import { type TargetDbRow, targetSettingsOf } from '../relay/definitions/target.ts';
import type { TemplateDbRow } from '../relay/definitions/template.ts';
import { type TrackerDbRow, trackerSettingsOf } from '../relay/definitions/tracker.ts';
import { Settings } from '../settings/settings.ts';
import { hasPassword, type UserRow, userBackupFieldsOf } from '../users/definition.ts';
import type {
  BotRec,
  ConfigurationT,
  LinkRec,
  PersonalContextRec,
  ProviderRec,
  SecretsModeT,
  TargetRec,
  TrackerRec,
  UserRec,
} from './schema.ts';
import { configSecrets, sealForBackup } from './sealed.ts';
import { deleteAt, setSecretPointers } from './secret-paths.ts';

/** Rows of the tables no definition types yet, as stored: each the record a backup carries. */
type LinkDbRow = LinkRec;
type PersonalContextDbRow = PersonalContextRec;
type PrimaryContextDbRow = { content: string; version: number | string; updated_by: string | null; updated_at: string };

/** Whether a table exists (the assistant's tables come with its migration). */
export async function tableExists(q: Queryable, name: string): Promise<boolean> {
  if (q.dialect === 'sqlite')
    return Boolean(
      await q.get<{ x: number }>(`SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?`, [name]),
    );
  return Boolean((await q.get<{ t: string | null }>('SELECT to_regclass(?) AS t', [name]))?.t);
}

/**
 * Leaves out the secrets at `patterns` inside `record.config` (or the whole config when the kind is
 * unknown here, since nothing says which of its fields are secret).
 */
function stripConfig(
  record: { config: Record<string, unknown>; secrets_omitted?: string[] },
  patterns: string[] | undefined,
): void {
  const omitted = record.secrets_omitted ?? [];
  if (!patterns) {
    if (Object.keys(record.config).length) {
      record.config = {};
      omitted.push('/config');
    }
  } else {
    for (const p of setSecretPointers(record.config, patterns, '/config')) {
      deleteAt(record, p);
      omitted.push(p);
    }
  }
  if (omitted.length) record.secrets_omitted = omitted;
}

/** Collects the whole configuration, ordered by id so two exports of the same data are identical. */
export async function collectConfiguration(
  core: Core,
  mode: SecretsModeT,
  q: Queryable = core.db,
): Promise<ConfigurationT> {
  const exclude = mode === 'exclude';
  /**
   * Leaves a record's plugin secrets out (exclude), or makes sure they travel sealed with the current key (include).
   */
  const secrets = (
    record: { config: Record<string, unknown>; secrets_omitted?: string[] },
    patterns: string[] | undefined,
  ) => {
    if (exclude) stripConfig(record, patterns);
    else sealForBackup(core.atRest, record, configSecrets(record, patterns));
  };

  const users: UserRec[] = (await q.all<UserRow>('SELECT * FROM users ORDER BY id')).map((r) => {
    const u: UserRec = { id: r.id, ...userBackupFieldsOf(r), created_at: r.created_at, updated_at: r.updated_at };
    // Only real bcrypt hashes travel; a placeholder (a user restored without one) is no secret to carry.
    const hash = hasPassword(r.password_hash) ? r.password_hash : undefined;
    if (hash && !exclude) u.password_hash = hash;
    else if (hash) u.secrets_omitted = ['/password_hash'];
    return u;
  });

  const kindOfProvider = new Map<string, string>();
  const providers: ProviderRec[] = (await q.all<ProviderDbRow>('SELECT * FROM providers ORDER BY id')).map((r) => {
    kindOfProvider.set(r.id, r.kind);
    const p: ProviderRec = {
      id: r.id,
      user_id: r.user_id,
      kind: r.kind,
      ...providerSettingsOf(r),
      ...selfMonitoringSettingsOf(r),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
    const allow = outboundAllowOf(r.outbound_allow);
    if (allow.length) p.outbound_allow = allow;
    const plugin = core.plugins.provider(r.kind);
    // The column is NOT NULL (the row type allows null).
    if (!exclude) {
      if (r.webhook_token) p.webhook_token = r.webhook_token;
    }
    // The token is a bearer secret in the webhook URL; it matters (and is listed) only for webhook kinds.
    else if (!plugin || plugin.def.manifest.ingest === 'webhook') p.secrets_omitted = ['/webhook_token'];
    secrets(p, plugin?.secretPaths);
    return p;
  });

  const trackers: TrackerRec[] = (await q.all<TrackerDbRow>('SELECT * FROM trackers ORDER BY id')).map((r) => {
    const t: TrackerRec = {
      id: r.id,
      user_id: r.user_id,
      provider_id: r.provider_id,
      ...trackerSettingsOf(r),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
    secrets(t, core.plugins.provider(kindOfProvider.get(r.provider_id) ?? '')?.trackerSecretPaths);
    return t;
  });

  const targets: TargetRec[] = (await q.all<TargetDbRow>('SELECT * FROM targets ORDER BY id')).map((r) => {
    const { update_messages, ...settings } = targetSettingsOf(r);
    const t: TargetRec = {
      id: r.id,
      user_id: r.user_id,
      kind: r.kind,
      ...settings,
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
    const allow = outboundAllowOf(r.outbound_allow);
    if (allow.length) t.outbound_allow = allow;
    // Written only when off, as backups were before the target was defined once (absent: on).
    if (!update_messages) t.update_messages = false;
    secrets(t, core.plugins.target(r.kind)?.secretPaths);
    return t;
  });

  const bots: BotRec[] = (await q.all<BotDbRow>('SELECT * FROM bots ORDER BY id')).map((r) => {
    const bot: BotRec = {
      id: r.id,
      user_id: r.user_id,
      kind: r.kind,
      ...botFieldsOf(r),
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
    if (!exclude) {
      if (r.token) {
        bot.token = r.token;
        sealForBackup(core.atRest, bot, ['/token']);
      }
      bot.webhook_path_id = r.webhook_path_id;
      return bot;
    }
    // The webhook path routes the bot service's deliveries (its secret derives from it): a routing secret.
    bot.secrets_omitted = [...(r.token ? ['/token'] : []), '/webhook_path_id'];
    return bot;
  });

  const hasAssistant = await tableExists(q, 'skills');
  const primary = hasAssistant
    ? await q.get<PrimaryContextDbRow>('SELECT * FROM primary_context WHERE id = 1')
    : undefined;
  const settings = await new Settings(q).all();
  const models = await readModelSettings(q);

  return {
    users,
    providers,
    trackers,
    targets,
    tracker_targets: (await q.all<LinkDbRow>('SELECT * FROM tracker_targets ORDER BY tracker_id, target_id')).map(
      (r) => ({
        tracker_id: r.tracker_id,
        target_id: r.target_id,
        user_id: r.user_id,
        created_at: r.created_at,
      }),
    ),
    bots,
    bot_chats: (await q.all<BotChatDbRow>('SELECT * FROM bot_chats ORDER BY id')).map((r) => ({
      id: r.id,
      bot_id: r.bot_id,
      user_id: r.user_id,
      ...botChatFieldsOf(r),
      last_seen_at: r.last_seen_at,
      created_at: r.created_at,
    })),
    actions: (await q.all<ActionDbRow>('SELECT * FROM actions ORDER BY id')).map((r) => ({
      id: r.id,
      user_id: r.user_id,
      ...actionSettingsOf(r),
      created_at: r.created_at,
      updated_at: r.updated_at,
    })),
    templates: (await q.all<TemplateDbRow>('SELECT * FROM templates ORDER BY id')).map((r) => ({
      id: r.id,
      user_id: r.user_id,
      event_type: r.event_type,
      locale: r.locale,
      title: r.title,
      body: r.body,
      created_at: r.created_at,
      updated_at: r.updated_at,
    })),
    skills: hasAssistant
      ? (await q.all<SkillRow>('SELECT * FROM skills ORDER BY id')).map((r) => ({
          id: r.id,
          owner_id: r.owner_id ?? null,
          scope: r.scope,
          name: r.name,
          description: r.description ?? null,
          prompt: r.prompt,
          created_at: r.created_at,
          updated_at: r.updated_at,
        }))
      : [],
    primary_context: primary
      ? {
          content: primary.content,
          version: Number(primary.version),
          updated_by: primary.updated_by ?? null,
          updated_at: primary.updated_at,
        }
      : null,
    personal_contexts: hasAssistant
      ? (await q.all<PersonalContextDbRow>('SELECT * FROM personal_contexts ORDER BY user_id')).map((r) => ({
          user_id: r.user_id,
          content: r.content,
          updated_at: r.updated_at,
        }))
      : [],
    settings,
    // No rows: no list (every model the endpoint lists) and no default (AI_MODEL); an empty default is the same.
    assistant_models: { models_allowed: models.allowed, default_model: models.default || null },
  };
}
