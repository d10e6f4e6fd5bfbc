/**
 * Import safety: checks a backup's configuration against this service before anything is
 * planned. Ids and unique keys are unique within the backup, every reference points inside it,
 * JSON-typed fields are re-validated (plugin configs against their schemas with defaults applied,
 * tracker event types against the provider's declared events, quiet hours, action schedules and
 * configs, settings). Records of plugin kinds this service does not have are skipped with a
 * reason, with what depends on them. Anything else that is wrong refuses the whole backup (422).
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { defaultModelProblem, normalizeModelChoice } from '../assistant/model-settings.ts';
import type { Core } from '../core.ts';
import { HttpError } from '../http/problem.ts';
import { undeclaredFields, withoutFields } from '../plugin-api/index.ts';
import { UNDECLARED_FIELD } from '../plugins/loader.ts';
import { selfMonitoringOf } from '../plugins/self-monitoring.ts';
import { botDriver } from '../relay/bots/driver.ts';
import { quietWindowProblem } from '../relay/quiet-hours/quiet-hours.ts';
import { validTimeZone } from '../relay/routes/common.ts';
import { checkSchedule } from '../relay/routes/schedule.ts';
import { actionConfig, type ConfigurationT, ProviderRecord } from './schema.ts';
import { under } from './secret-paths.ts';
import { settingProblem } from './settings-rules.ts';

export interface Skip {
  table: string;
  id: string;
  reason: string;
}
export interface Sanitized {
  config: ConfigurationT;
  skipped: Skip[];
  warnings: string[];
}
type Problem = { path: string; message: string };

const compiled = new WeakMap<object, ReturnType<typeof Compile>>();
function compiledFor(schema: TSchema) {
  let c = compiled.get(schema);
  if (!c) {
    c = Compile(schema as never);
    compiled.set(schema, c);
  }
  return c;
}

/**
 * Validates a JSON config against a schema with defaults applied. Errors at places the backup
 * left out on purpose (omitted secrets, relative pointers) do not count: those records are
 * completed from the stored record or restored disabled.
 */
export function validateConfig(
  schema: TSchema,
  config: Record<string, unknown>,
  omitted: string[],
): { value: Record<string, unknown>; errors: Problem[] } {
  // Fields the schema does not declare are refused, as the API refuses them (a backup carrying one
  // was edited, or made before the API refused them: the report names each).
  const undeclared = undeclaredFields(schema, config);
  const refused = undeclared.map((path) => ({ path, message: UNDECLARED_FIELD }));
  const value = Value.Default(schema as never, withoutFields(config, undeclared)) as Record<string, unknown>;
  const c = compiledFor(schema);
  if (c.Check(value)) return { value, errors: refused };
  if (omitted.includes('')) return { value, errors: refused };
  const esc = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');
  const errors = [...c.Errors(value)]
    .filter((e) => {
      if (e.keyword === 'boolean') return false;
      if (omitted.includes(e.instancePath)) return false;
      const req = (e.params as { requiredProperties?: string[] }).requiredProperties;
      return !(
        e.keyword === 'required' &&
        req?.length &&
        req.every((p) => omitted.includes(`${e.instancePath}/${esc(p)}`))
      );
    })
    .map((e) => ({
      path: e.instancePath || '/',
      message:
        e.keyword === 'additionalProperties'
          ? 'has fields that are not allowed: ' +
            `${(e.params as { additionalProperties?: string[] }).additionalProperties?.join(', ')}`
          : e.message,
    }));
  return { value, errors: [...refused, ...errors] };
}

const relOmitted = (omitted: string[] | undefined, prefix: string) =>
  (omitted ?? []).map((p) => under(p, prefix)).filter((p): p is string => p !== undefined);
const PROVIDER_FIELDS = new Set(Object.keys(ProviderRecord.properties));

/** Checks and cleans a configuration; throws 422 listing the problems, or returns it with what was skipped. */
export function sanitizeConfiguration(core: Core, input: ConfigurationT): Sanitized {
  const c = structuredClone(input);
  const problems: Problem[] = [];
  const skipped: Skip[] = [];
  const warnings: string[] = [];
  const bad = (path: string, message: string) => {
    if (problems.length < 50) problems.push({ path: `/configuration${path}`, message });
  };

  // Ids and unique keys are unique within the backup.
  const unique = (table: string, list: unknown[], key: (r: any) => string | null | undefined, what: string) => {
    const seen = new Set<string>();
    list.forEach((r, i) => {
      const k = key(r);
      if (k == null) return;
      if (seen.has(k)) bad(`/${table}/${i}`, `repeats the ${what} of another record`);
      seen.add(k);
    });
  };
  for (const t of [
    'users',
    'providers',
    'trackers',
    'targets',
    'bots',
    'bot_chats',
    'actions',
    'templates',
    'skills',
  ] as const)
    unique(t, c[t], (r) => r.id, 'id');
  unique('users', c.users, (r) => r.email.trim().toLowerCase(), 'email');
  unique('providers', c.providers, (r) => r.webhook_token, 'webhook_token');
  const selfKind = selfMonitoringOf(core)?.kind;
  unique(
    'providers',
    c.providers,
    (r) => (r.kind === selfKind ? r.user_id : null),
    'user of its self-monitoring provider (one per user)',
  );
  unique('bots', c.bots, (r) => r.bot_id, 'bot_id');
  unique('bots', c.bots, (r) => r.webhook_path_id, 'webhook_path_id');
  unique('bot_chats', c.bot_chats, (r) => `${r.bot_id}/${r.chat_id}`, 'bot and chat');
  unique('tracker_targets', c.tracker_targets, (r) => `${r.tracker_id}/${r.target_id}`, 'tracker and target');
  unique('templates', c.templates, (r) => `${r.user_id}/${r.event_type}/${r.locale}`, 'user, event type and locale');
  unique('personal_contexts', c.personal_contexts, (r) => r.user_id, 'user');

  // References stay inside the backup and inside one user.
  const users = new Set(c.users.map((u) => u.id));
  const owner = (table: string, list: { user_id: string }[]) =>
    list.forEach((r, i) => {
      if (!users.has(r.user_id)) bad(`/${table}/${i}/user_id`, 'names a user that is not in the backup');
    });
  for (const t of [
    'providers',
    'trackers',
    'targets',
    'tracker_targets',
    'bots',
    'bot_chats',
    'actions',
    'templates',
    'personal_contexts',
  ] as const)
    owner(t, c[t]);
  const providers = new Map(c.providers.map((p) => [p.id, p]));
  const trackers = new Map(c.trackers.map((t) => [t.id, t]));
  const targets = new Map(c.targets.map((t) => [t.id, t]));
  const bots = new Map(c.bots.map((b) => [b.id, b]));
  c.trackers.forEach((t, i) => {
    const p = providers.get(t.provider_id);
    if (!p || p.user_id !== t.user_id)
      bad(`/trackers/${i}/provider_id`, 'names a provider of this user that is not in the backup');
  });
  c.tracker_targets.forEach((l, i) => {
    if (trackers.get(l.tracker_id)?.user_id !== l.user_id)
      bad(`/tracker_targets/${i}/tracker_id`, 'names a tracker of this user that is not in the backup');
    if (targets.get(l.target_id)?.user_id !== l.user_id)
      bad(`/tracker_targets/${i}/target_id`, 'names a target of this user that is not in the backup');
  });
  c.bot_chats.forEach((ch, i) => {
    if (bots.get(ch.bot_id)?.user_id !== ch.user_id)
      bad(`/bot_chats/${i}/bot_id`, 'names a bot of this user that is not in the backup');
  });
  c.skills.forEach((s, i) => {
    if ((s.scope === 'general') !== (s.owner_id === null))
      bad(`/skills/${i}/owner_id`, 'must be null for general skills and a user for personal ones');
    else if (s.owner_id && !users.has(s.owner_id))
      bad(`/skills/${i}/owner_id`, 'names a user that is not in the backup');
  });
  if (c.primary_context?.updated_by && !users.has(c.primary_context.updated_by)) c.primary_context.updated_by = null;
  for (const [key, value] of Object.entries(c.settings)) {
    const p = settingProblem(key, value);
    if (p) bad(`/settings/${key}`, p);
  }
  // The model choice as PUT /api/v1/admin/models takes it: ids trimmed and each once, the default one of them.
  if (c.assistant_models) {
    const m = normalizeModelChoice(c.assistant_models.models_allowed, c.assistant_models.default_model ?? '');
    const p = defaultModelProblem(m.allowed, m.default);
    if (p) bad('/assistant_models/default_model', p);
    c.assistant_models = { models_allowed: m.allowed, default_model: m.default || null };
  }

  // Plugin kinds and their configs.
  const skip = (table: string, id: string, reason: string) => skipped.push({ table, id, reason });
  const skippedIds = new Set<string>();
  c.providers.forEach((p, i) => {
    const plugin = core.plugins.provider(p.kind);
    if (!plugin) {
      skip('providers', p.id, `provider kind "${p.kind}" is not enabled on this service`);
      skippedIds.add(p.id);
      return;
    }
    const schema = plugin.def.manifest.configSchema as TSchema;
    // Top-level fields beside the known ones (older backups): config aliases the plugin declares are
    // folded into the config, winning over it as they did in the API; empty ones of other kinds go.
    const rec = p as unknown as Record<string, unknown>;
    for (const k of Object.keys(rec)) {
      if (PROVIDER_FIELDS.has(k)) continue;
      const v = rec[k];
      delete rec[k];
      if (plugin.configAliases.includes(k)) {
        if (v !== null) p.config[k] = v;
      } else if (v !== null && v !== false) bad(`/providers/${i}/${k}`, `does not apply to "${p.kind}" providers`);
    }
    const omitted = relOmitted(p.secrets_omitted, '/config');
    const r = validateConfig(schema, p.config, omitted);
    for (const e of r.errors) bad(`/providers/${i}/config${e.path === '/' ? '' : e.path}`, e.message);
    p.config = r.value;
    if (r.errors.length) return;
    // The plugin's own rules, except at fields the backup left out on purpose.
    for (const e of plugin.checkConfig(r.value))
      if (!omitted.includes('') && !omitted.includes(e.path))
        bad(`/providers/${i}/config${e.path === '/' ? '' : e.path}`, e.message);
  });
  c.trackers.forEach((t, i) => {
    const p = providers.get(t.provider_id);
    if (!p) return;
    if (skippedIds.has(p.id)) {
      skip('trackers', t.id, `its provider is skipped (kind "${p.kind}" is not enabled)`);
      skippedIds.add(t.id);
      return;
    }
    const plugin = core.plugins.provider(p.kind)!;
    const declared = Object.keys(plugin.def.manifest.events ?? {});
    for (const field of ['event_types', 'quiet_policies'] as const) {
      for (const k of Object.keys(t[field]))
        if (!declared.includes(k)) bad(`/trackers/${i}/${field}/${k}`, `is not an event type of "${p.kind}"`);
    }
    if (t.quiet_hours) {
      const q = quietWindowProblem(t.quiet_hours);
      if (q) bad(`/trackers/${i}/quiet_hours`, q);
    }
    const r = validateConfig(plugin.trackerSchema as TSchema, t.config, relOmitted(t.secrets_omitted, '/config'));
    for (const e of r.errors) bad(`/trackers/${i}/config${e.path === '/' ? '' : e.path}`, e.message);
    t.config = r.value;
  });
  c.targets.forEach((t, i) => {
    const plugin = core.plugins.target(t.kind);
    if (!plugin) {
      skip('targets', t.id, `target kind "${t.kind}" is not enabled on this service`);
      skippedIds.add(t.id);
      return;
    }
    const omitted = relOmitted(t.secrets_omitted, '/config');
    const r = validateConfig(plugin.def.manifest.configSchema as TSchema, t.config, omitted);
    for (const e of r.errors) bad(`/targets/${i}/config${e.path === '/' ? '' : e.path}`, e.message);
    t.config = r.value;
    if (!r.errors.length)
      for (const e of plugin.checkConfig(r.value))
        if (!omitted.includes('') && !omitted.includes(e.path))
          bad(`/targets/${i}/config${e.path === '/' ? '' : e.path}`, e.message);
    const botId = t.config.bot_id;
    if (botId !== undefined) {
      const bot = typeof botId === 'string' ? bots.get(botId) : undefined;
      if (!bot || bot.user_id !== t.user_id)
        bad(`/targets/${i}/config/bot_id`, 'names a bot of this user that is not in the backup');
      else if (bot.kind !== t.kind)
        bad(`/targets/${i}/config/bot_id`, `names a ${bot.kind} bot, but this is a ${t.kind} target`);
    }
  });
  c.tracker_targets = c.tracker_targets.filter((l) => {
    const gone = skippedIds.has(l.tracker_id) ? l.tracker_id : skippedIds.has(l.target_id) ? l.target_id : undefined;
    if (gone) skip('tracker_targets', `${l.tracker_id}/${l.target_id}`, 'its tracker or target is skipped');
    return !gone;
  });
  c.bots.forEach((b, i) => {
    if (b.mode === 'webhook' && !core.config.messagingWebhookSecret)
      bad(
        `/bots/${i}/mode`,
        'is webhook, but SERVICE_MESSAGING_WEBHOOK_SECRET is not set on this service; set it before restoring',
      );
    if (!botDriver(core, b.kind))
      warnings.push(
        `bot "${b.name}" (${b.id}) is of kind "${b.kind}", which is not enabled here; it is restored but ` +
          'stays idle until its plugin is enabled',
      );
  });
  const now = core.clock.now();
  c.actions = c.actions.filter((a, i) => {
    if (!validTimeZone(a.timezone)) {
      bad(`/actions/${i}/timezone`, 'is not an IANA time zone');
      return true;
    }
    const s = checkSchedule(a.schedule, a.timezone, now);
    if (!s.ok) {
      bad(`/actions/${i}/schedule`, s.problem);
      return true;
    }
    const v = actionConfig[a.kind];
    if (!v.Check(a.config)) {
      for (const e of [...v.Errors(a.config)].slice(0, 5)) bad(`/actions/${i}/config${e.instancePath}`, e.message);
      return true;
    }
    const cfg = a.config as { tracker_id?: string; target_ids?: string[] };
    const refs = a.kind === 'digest' ? [cfg.tracker_id!] : cfg.target_ids!;
    const table = a.kind === 'digest' ? trackers : targets;
    for (const id of refs) {
      if (table.get(id)?.user_id !== a.user_id) {
        bad(
          `/actions/${i}/config`,
          `names ${a.kind === 'digest' ? 'a tracker' : 'a target'} of this user that is not in the backup`,
        );
        return true;
      }
      if (skippedIds.has(id)) {
        skip('actions', a.id, `it uses ${a.kind === 'digest' ? 'a tracker' : 'a target'} that is skipped`);
        return false;
      }
    }
    return true;
  });
  if (problems.length) {
    throw new HttpError(
      422,
      'invalid_backup',
      `The backup was refused: ${problems
        .slice(0, 5)
        .map((p) => `${p.path} ${p.message}`)
        .join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}.`,
      { errors: problems },
    );
  }
  const gone = new Set(skipped.map((s) => s.id));
  c.providers = c.providers.filter((p) => !gone.has(p.id));
  c.trackers = c.trackers.filter((t) => !gone.has(t.id));
  c.targets = c.targets.filter((t) => !gone.has(t.id));
  return { config: c, skipped, warnings };
}
