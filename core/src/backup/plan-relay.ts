/**
 * Planning the restore of the relay's records. Matching: providers by id (a user's self-monitoring
 * provider also by its user), trackers by id (and by name under a provider matched by its user),
 * bots by id or remote `bot_id`, chats by id or (bot, chat), links by (tracker, target),
 * templates by id or (user, event type, locale), the rest by id. Secrets an `exclude` backup left
 * out are taken from the matched record; a record with nothing to take them from is restored
 * disabled with the status detail "secret missing from backup". Plans compare clear values (stored
 * secrets are opened, the backup's were opened before sanitizing); the steps store them sealed.
 */
import { Database as Db } from '../db/database.ts';
import { insertRow, updateRow } from '../db/rows.ts';
import { randomToken } from '../http/ids.ts';
import { checkOutboundAllow } from '../net/instance-allow.ts';
import { selfMonitoringOf } from '../plugins/self-monitoring.ts';
import { ACTION_SETTINGS, type ActionDbRow } from '../relay/definitions/action.ts';
import {
  BOT_BACKUP_FIELDS,
  BOT_CHAT_BACKUP_FIELDS,
  type BotChatDbRow,
  type BotDbRow,
} from '../relay/definitions/bot.ts';
import { type ProviderDbRow, providerSettingsFrom } from '../relay/definitions/provider.ts';
import { SELF_MONITORING_SETTINGS } from '../relay/definitions/self-monitoring.ts';
import { type TargetDbRow, targetSettingsFrom } from '../relay/definitions/target.ts';
import type { TemplateDbRow } from '../relay/definitions/template.ts';
import { type TrackerDbRow, trackerSettingsFrom } from '../relay/definitions/tracker.ts';
import { newWebhookToken } from '../relay/inbound/dialects.ts';
import { checkSchedule } from '../relay/routes/schedule.ts';
import { type Planner, pickFields, SECRET_MISSING } from './planner.ts';
import type { ConfigurationT } from './schema.ts';

/** A stored row with the secrets of its config opened (one no key opens counts as missing). */
const openConfig = <R extends { config: unknown }>(p: Planner, r: R | undefined, paths: string[]): R | undefined =>
  r && { ...r, config: p.core.atRest.openConfigLenient(Db.json(r.config, {}), paths) };

/** A record's values as stored: its config's secrets sealed. */
const sealConfig = (p: Planner, rec: Record<string, unknown>, paths: string[]): Record<string, unknown> => ({
  ...rec,
  config: p.core.atRest.sealConfig(rec.config as Record<string, unknown>, paths),
});

/** The given fields of a stored row (its config as an object), where a backup's omitted secrets are taken from. */
const stored = <R extends object>(
  r: R | undefined,
  fields: (keyof R & string)[],
): Record<string, unknown> | undefined => {
  if (!r) return undefined;
  const values = new Map<string, unknown>(Object.entries(r));
  return Object.fromEntries(fields.map((f) => [f, f === 'config' ? Db.json(values.get(f), {}) : values.get(f)]));
};

/** A record's outbound allow list as stored: its valid entries, normalised, or null for none. */
const allowOf = (list: string[] | undefined): string[] | null => {
  const { value } = checkOutboundAllow(list ?? []);
  return value.length ? value : null;
};

export async function planProviders(p: Planner, c: ConfigurationT): Promise<void> {
  const selfKind = selfMonitoringOf(p.core)?.kind;
  for (const x of c.providers) {
    const userId = p.map('users', x.user_id);
    const paths = p.core.plugins.provider(x.kind)?.secretPaths ?? [];
    const byId = openConfig(p, await p.get<ProviderDbRow>('SELECT * FROM providers WHERE id = ?', [x.id]), paths);
    const byKey =
      x.kind === selfKind
        ? openConfig(
            p,
            await p.get<ProviderDbRow>('SELECT * FROM providers WHERE user_id = ? AND kind = ?', [userId, selfKind]),
            paths,
          )
        : undefined;
    const match = byId ?? byKey;
    let ambiguous =
      byId && byKey && byId.id !== byKey.id
        ? `it matches provider ${byId.id} by id and ${byKey.id} as the user's self-monitoring provider`
        : undefined;
    if (x.webhook_token && !ambiguous) {
      const other = await p.get<{ id: string }>('SELECT id FROM providers WHERE webhook_token = ?', [x.webhook_token]);
      if (other && other.id !== match?.id) ambiguous = `its webhook token belongs to provider ${other.id}`;
    }
    const id = match?.id ?? x.id;
    p.maps.providers.set(x.id, id);
    const rec: Record<string, unknown> = { config: x.config, webhook_token: x.webhook_token };
    const missing = p.fillSecrets(rec, x.secrets_omitted, stored(match, ['config', 'webhook_token']));
    const enabled = missing.length ? false : x.enabled;
    const desired: Record<string, unknown> = {
      user_id: userId,
      kind: x.kind,
      ...providerSettingsFrom({ ...x, config: rec.config as Record<string, unknown>, enabled }),
      ...pickFields(x, SELF_MONITORING_SETTINGS),
      outbound_allow: allowOf(x.outbound_allow),
    };
    if (typeof rec.webhook_token === 'string') desired.webhook_token = rec.webhook_token;
    const d = p.decide('providers', x.id, match, desired, ambiguous);
    p.keptOut(d, match, id);
    const status = {
      status: enabled ? 'pending' : 'disabled',
      status_detail: missing.length ? SECRET_MISSING : null,
      backlog_latched: false,
    };
    if (missing.length && (d === 'insert' || d === 'update')) p.disabled('providers', id);
    if (d === 'insert') {
      p.step((q) =>
        insertRow(q, 'providers', {
          id,
          ...sealConfig(p, desired, paths),
          webhook_token: desired.webhook_token ?? newWebhookToken(p.core.plugins.provider(x.kind)),
          ...status,
          created_at: x.created_at,
          updated_at: x.updated_at,
        }),
      );
    } else if (d === 'update')
      p.step((q) =>
        updateRow(q, 'providers', { ...sealConfig(p, desired, paths), ...status, updated_at: p.now }, { id }),
      );
  }
}

export async function planTrackers(p: Planner, c: ConfigurationT): Promise<void> {
  const kindOf = new Map(c.providers.map((x) => [x.id, x.kind]));
  for (const x of c.trackers) {
    const userId = p.map('users', x.user_id);
    const providerId = p.map('providers', x.provider_id);
    if (p.absent.has(providerId)) {
      p.skip('trackers', x.id, 'its provider was not restored');
      p.absent.add(x.id);
      continue;
    }
    const paths = p.core.plugins.provider(kindOf.get(x.provider_id) ?? '')?.trackerSecretPaths ?? [];
    const byId = openConfig(p, await p.get<TrackerDbRow>('SELECT * FROM trackers WHERE id = ?', [x.id]), paths);
    // Under a provider matched by its user (self-monitoring), the tracker the service created is found by name.
    const byName =
      providerId !== x.provider_id
        ? openConfig(
            p,
            await p.get<TrackerDbRow>('SELECT * FROM trackers WHERE provider_id = ? AND name = ? ORDER BY id LIMIT 1', [
              providerId,
              x.name,
            ]),
            paths,
          )
        : undefined;
    const match = byId ?? byName;
    const ambiguous =
      byId && byName && byId.id !== byName.id
        ? `it matches tracker ${byId.id} by id and ${byName.id} by name`
        : undefined;
    const id = match?.id ?? x.id;
    p.maps.trackers.set(x.id, id);
    const rec: Record<string, unknown> = { config: x.config };
    const missing = p.fillSecrets(rec, x.secrets_omitted, stored(match, ['config']));
    const desired = {
      user_id: userId,
      provider_id: providerId,
      ...trackerSettingsFrom(x),
      enabled: missing.length ? false : x.enabled,
      config: rec.config,
    };
    const d = p.decide('trackers', x.id, match, desired, ambiguous);
    p.keptOut(d, match, id);
    p.owners.trackers.set(id, (d === 'keep' || d === 'same' ? match?.user_id : undefined) ?? userId);
    if (missing.length && (d === 'insert' || d === 'update')) p.disabled('trackers', id);
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'trackers', {
          id,
          ...sealConfig(p, desired, paths),
          created_at: x.created_at,
          updated_at: x.updated_at,
        }),
      );
    else if (d === 'update')
      p.step((q) => updateRow(q, 'trackers', { ...sealConfig(p, desired, paths), updated_at: p.now }, { id }));
  }
}

export async function planBots(p: Planner, c: ConfigurationT): Promise<void> {
  for (const x of c.bots) {
    const openToken = (r: BotDbRow | undefined) => r && { ...r, token: p.core.atRest.openLenient(r.token) };
    const byId = openToken(await p.get<BotDbRow>('SELECT * FROM bots WHERE id = ?', [x.id]));
    const byRemote = x.bot_id
      ? openToken(await p.get<BotDbRow>('SELECT * FROM bots WHERE bot_id = ?', [x.bot_id]))
      : undefined;
    const match = byId ?? byRemote;
    let ambiguous =
      byId && byRemote && byId.id !== byRemote.id
        ? `it matches bot ${byId.id} by id and ${byRemote.id} by bot_id`
        : undefined;
    const path = x.webhook_path_id
      ? await p.get<{ id: string }>('SELECT id FROM bots WHERE webhook_path_id = ?', [x.webhook_path_id])
      : undefined;
    if (!ambiguous && path && path.id !== match?.id) ambiguous = `its webhook path belongs to bot ${path.id}`;
    const id = match?.id ?? x.id;
    p.maps.bots.set(x.id, id);
    const rec: Record<string, unknown> = { token: x.token };
    const missing = p.fillSecrets(
      rec,
      x.secrets_omitted?.filter((o) => o !== '/webhook_path_id'),
      stored(match, ['token']),
    );
    // The webhook path (left out of exclude backups) is the matched record's, else a new one.
    const pathId = x.webhook_path_id ?? match?.webhook_path_id ?? randomToken();
    const desired: Record<string, unknown> = {
      user_id: p.map('users', x.user_id),
      kind: x.kind,
      ...pickFields(x, BOT_BACKUP_FIELDS),
      webhook_path_id: pathId,
    };
    if (typeof rec.token === 'string') desired.token = rec.token;
    const d = p.decide('bots', x.id, match, desired, ambiguous);
    p.keptOut(d, match, id);
    if (d === 'insert' && !x.webhook_path_id) {
      p.summary.warnings.push(
        `bot "${x.name}" (${id}) gets a new webhook path, since the backup leaves webhook paths ` +
          `out${x.mode === 'webhook' ? '; its webhook is registered at the new address once the bot runs' : ''}`,
      );
    }
    // Without a token the bot must not start: `auth_failed` is the status the bot runtime leaves alone.
    // Otherwise `pending` has the runtime check the token and register a webhook-mode bot's webhook again.
    const status = missing.length
      ? { status: 'auth_failed', status_detail: SECRET_MISSING }
      : { status: 'pending', status_detail: null };
    if (missing.length && (d === 'insert' || d === 'update')) p.disabled('bots', id);
    const token =
      typeof desired.token === 'string' && desired.token ? { token: p.core.atRest.seal(desired.token) } : {};
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'bots', {
          id,
          ...desired,
          token: '',
          ...token,
          ...status,
          update_offset: 0,
          created_at: x.created_at,
          updated_at: x.updated_at,
        }),
      );
    else if (d === 'update') {
      // A webhook registered for another path says nothing about this one.
      const registration = match?.webhook_path_id === pathId ? {} : { webhook_key_id: null };
      p.step((q) =>
        updateRow(q, 'bots', { ...desired, ...token, ...status, ...registration, updated_at: p.now }, { id }),
      );
    }
  }
  for (const x of c.bot_chats) {
    const botId = p.map('bots', x.bot_id);
    if (p.absent.has(botId)) {
      p.skip('bot_chats', x.id, 'its bot was not restored');
      continue;
    }
    const byId = await p.get<BotChatDbRow>('SELECT * FROM bot_chats WHERE id = ?', [x.id]);
    const byKey = await p.get<BotChatDbRow>('SELECT * FROM bot_chats WHERE bot_id = ? AND chat_id = ?', [
      botId,
      x.chat_id,
    ]);
    const match = byId ?? byKey;
    const ambiguous =
      byId && byKey && byId.id !== byKey.id
        ? `it matches chat ${byId.id} by id and ${byKey.id} by bot and chat`
        : undefined;
    const id = match?.id ?? x.id;
    const desired = {
      bot_id: botId,
      user_id: p.map('users', x.user_id),
      ...pickFields(x, BOT_CHAT_BACKUP_FIELDS),
    };
    const d = p.decide('bot_chats', x.id, match, desired, ambiguous);
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'bot_chats', { id, ...desired, last_seen_at: x.last_seen_at, created_at: x.created_at }),
      );
    else if (d === 'update') p.step((q) => updateRow(q, 'bot_chats', desired, { id }));
  }
}

export async function planTargets(p: Planner, c: ConfigurationT): Promise<void> {
  for (const x of c.targets) {
    const userId = p.map('users', x.user_id);
    const paths = p.core.plugins.target(x.kind)?.secretPaths ?? [];
    const match = openConfig(p, await p.get<TargetDbRow>('SELECT * FROM targets WHERE id = ?', [x.id]), paths);
    const rec: Record<string, unknown> = { config: structuredClone(x.config) };
    const missing = p.fillSecrets(rec, x.secrets_omitted, stored(match, ['config']));
    const config = rec.config as Record<string, unknown>;
    if (typeof config.bot_id === 'string') config.bot_id = p.map('bots', config.bot_id);
    if (typeof config.bot_id === 'string' && p.absent.has(config.bot_id)) {
      p.skip('targets', x.id, 'its bot was not restored');
      p.absent.add(x.id);
      continue;
    }
    const desired = {
      user_id: userId,
      kind: x.kind,
      ...targetSettingsFrom({ ...x, config }),
      ...(missing.length ? { enabled: false } : {}),
      outbound_allow: allowOf(x.outbound_allow),
    };
    const d = p.decide('targets', x.id, match, desired);
    p.owners.targets.set(x.id, (d === 'keep' || d === 'same' ? match?.user_id : undefined) ?? userId);
    const runtime = { consecutive_failures: 0, last_error: missing.length ? SECRET_MISSING : null };
    if (missing.length && (d === 'insert' || d === 'update')) p.disabled('targets', x.id);
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'targets', {
          id: x.id,
          ...sealConfig(p, desired, paths),
          ...runtime,
          created_at: x.created_at,
          updated_at: x.updated_at,
        }),
      );
    else if (d === 'update')
      p.step((q) =>
        updateRow(q, 'targets', { ...sealConfig(p, desired, paths), ...runtime, updated_at: p.now }, { id: x.id }),
      );
  }
  for (const l of c.tracker_targets) {
    const trackerId = p.map('trackers', l.tracker_id);
    const userId = p.owners.trackers.get(trackerId);
    const label = `${l.tracker_id}/${l.target_id}`;
    if (p.absent.has(trackerId) || p.absent.has(l.target_id)) {
      p.skip('tracker_targets', label, 'its tracker or target was not restored');
      continue;
    }
    if (!userId || userId !== p.owners.targets.get(l.target_id)) {
      p.skip('tracker_targets', label, 'after the restore its tracker and target would belong to different users');
      continue;
    }
    const existing = await p.get<{ user_id: string }>(
      'SELECT user_id FROM tracker_targets WHERE tracker_id = ? AND target_id = ?',
      [trackerId, l.target_id],
    );
    const d = p.decide('tracker_targets', label, existing, { user_id: userId });
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'tracker_targets', {
          tracker_id: trackerId,
          target_id: l.target_id,
          user_id: userId,
          created_at: l.created_at,
        }),
      );
    else if (d === 'update')
      p.step((q) =>
        updateRow(q, 'tracker_targets', { user_id: userId }, { tracker_id: trackerId, target_id: l.target_id }),
      );
  }
}

export async function planActionsAndTemplates(p: Planner, c: ConfigurationT): Promise<void> {
  const now = new Date(p.now);
  for (const x of c.actions) {
    const config = structuredClone(x.config);
    if (x.kind === 'digest') config.tracker_id = p.map('trackers', config.tracker_id as string);
    if (x.kind === 'ai_digest' && Array.isArray(config.provider_ids))
      config.provider_ids = (config.provider_ids as string[]).map((id) => p.map('providers', id));
    const uses = x.kind === 'digest' ? [config.tracker_id as string] : (config.target_ids as string[]);
    if (uses.some((u) => p.absent.has(u))) {
      p.skip('actions', x.id, `its ${x.kind === 'digest' ? 'tracker' : 'targets'} were not restored`);
      continue;
    }
    const match = await p.get<ActionDbRow>('SELECT * FROM actions WHERE id = ?', [x.id]);
    const desired = {
      user_id: p.map('users', x.user_id),
      ...pickFields(x, ACTION_SETTINGS),
      config,
    };
    const d = p.decide('actions', x.id, match, desired);
    const s = checkSchedule(x.schedule, x.timezone, now);
    const nextRun = x.enabled && s.ok && s.nextRun ? s.nextRun.toISOString() : null;
    if (d === 'insert')
      p.step((q) =>
        insertRow(q, 'actions', {
          id: x.id,
          ...desired,
          next_run_at: nextRun,
          created_at: x.created_at,
          updated_at: x.updated_at,
        }),
      );
    else if (d === 'update')
      p.step((q) => updateRow(q, 'actions', { ...desired, next_run_at: nextRun, updated_at: p.now }, { id: x.id }));
  }
  for (const x of c.templates) {
    const userId = p.map('users', x.user_id);
    const byId = await p.get<TemplateDbRow>('SELECT * FROM templates WHERE id = ?', [x.id]);
    const byKey = await p.get<TemplateDbRow>(
      'SELECT * FROM templates WHERE user_id = ? AND event_type = ? AND locale = ?',
      [userId, x.event_type, x.locale],
    );
    const match = byId ?? byKey;
    const ambiguous =
      byId && byKey && byId.id !== byKey.id
        ? `it matches template ${byId.id} by id and ${byKey.id} by user, event type and locale`
        : undefined;
    const id = match?.id ?? x.id;
    const desired = { user_id: userId, event_type: x.event_type, locale: x.locale, title: x.title, body: x.body };
    const d = p.decide('templates', x.id, match, desired, ambiguous);
    if (d === 'insert')
      p.step((q) => insertRow(q, 'templates', { id, ...desired, created_at: x.created_at, updated_at: x.updated_at }));
    else if (d === 'update') p.step((q) => updateRow(q, 'templates', { ...desired, updated_at: p.now }, { id }));
  }
}
