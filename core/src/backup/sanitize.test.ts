/**
 * The import checks of a configuration backup, without a running service: `sanitizeConfiguration`
 * against a core that holds only what it reads (a plugin host of hand-made plugins, a clock and
 * the messaging webhook secret), and `validateConfig` on its own.
 */
import t, { type Test } from 'tap';
import Type, { type TSchema } from 'typebox';
import type { Core } from '../core.ts';
import type { HttpError } from '../http/problem.ts';
import { sanitizeConfiguration, validateConfig } from './sanitize.ts';
import type { ConfigurationT } from './schema.ts';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const U1 = id(1);
const U2 = id(2);
const P1 = id(11);
const P2 = id(12);
const T1 = id(21);
const G1 = id(31);
const G2 = id(32);
const B1 = id(41);
const C1 = id(51);
const A1 = id(61);
const A2 = id(62);
const NOBODY = id(99);
const TIME = '2030-01-01T00:00:00.000Z';

type Problem = { path: string; message: string };
type ConfigCheck = (config: Record<string, unknown>) => Problem[];

const hookSchema = Type.Object({
  url: Type.String({ minLength: 3 }),
  token: Type.Optional(Type.String()),
  creds: Type.Optional(Type.Object({ user: Type.String(), 'a/b~c': Type.String() })),
  mode: Type.String({ default: 'a' }),
  meta: Type.Optional(Type.Object({}, { additionalProperties: false })),
});
const pluginCheck: ConfigCheck = (c) =>
  c.url === 'plugin-refuses'
    ? [{ path: '/url', message: 'is refused by the plugin' }]
    : c.url === 'plugin-refuses-all'
      ? [{ path: '/', message: 'is refused as a whole' }]
      : [];

function plugin(kind: 'provider' | 'target', kindId: string, manifest: Record<string, unknown>, extra = {}) {
  return {
    packageName: `herald-${kind}-${kindId}`,
    id: kindId,
    kind,
    def: { manifest, ...extra },
    secretPaths: [],
    trackerSecretPaths: [],
    checkConfig: pluginCheck,
    configAliases: [] as string[],
    trackerSchema: { type: 'object' } as unknown,
    warnings: [],
  };
}

function makeCore(opts: { webhookSecret?: string; withoutSelfMonitoring?: boolean } = {}): Core {
  const hook = plugin('provider', 'hook', {
    configSchema: hookSchema,
    events: { probe_ping: {}, alert: {} },
  });
  hook.configAliases = ['token'];
  hook.trackerSchema = Type.Object({ filter: Type.String({ default: '*' }), key: Type.Optional(Type.String()) });
  const self = plugin('provider', 'selfmon', {
    configSchema: Type.Object({}),
    displayName: 'Self',
    coreManaged: true,
    ingest: 'internal',
    events: { pf: {}, db: {}, tf: {} },
    selfMonitoring: { events: { pollFailures: 'pf', deferredBacklog: 'db', targetFailures: 'tf' } },
  });
  const chat = plugin(
    'target',
    'chat',
    {
      configSchema: Type.Object({
        chat: Type.String({ minLength: 1 }),
        bot_id: Type.Optional(Type.Unknown()),
        url: Type.Optional(Type.String()),
      }),
    },
    { botDriver: {} },
  );
  const mail = plugin('target', 'mail', {
    configSchema: Type.Object({ to: Type.String({ default: 'nobody' }), bot_id: Type.Optional(Type.String()) }),
  });
  const plugins = new Map<string, unknown>([
    ['provider:hook', hook],
    ['provider:selfmon', self],
    ['target:chat', chat],
    ['target:mail', mail],
  ]);
  if (opts.withoutSelfMonitoring) plugins.delete('provider:selfmon');
  return {
    plugins: {
      plugins,
      provider: (k: string) => plugins.get(`provider:${k}`),
      target: (k: string) => plugins.get(`target:${k}`),
    },
    config: { messagingWebhookSecret: opts.webhookSecret },
    clock: { now: () => new Date('2030-06-15T10:00:00Z') },
  } as unknown as Core;
}

const user = (uid: string, email: string) => ({
  id: uid,
  email,
  role: 'user',
  is_active: true,
  locale: 'en',
  max_chats: 20,
  max_ai_messages_per_day: null,
  max_ai_tokens_per_day: null,
  created_at: TIME,
  updated_at: TIME,
});
const provider = (pid: string, kind: string, userId: string, extra: Record<string, unknown> = {}) => ({
  id: pid,
  user_id: userId,
  kind,
  name: `provider ${pid.slice(-2)}`,
  config: {} as Record<string, unknown>,
  enabled: true,
  poll_failure_threshold: 3,
  deferred_backlog_threshold: 100,
  target_failure_threshold: 3,
  track_poll_failures: true,
  track_deferred_backlog: true,
  track_target_failures: true,
  created_at: TIME,
  updated_at: TIME,
  ...extra,
});
const tracker = (tid: string, providerId: string, userId: string, extra: Record<string, unknown> = {}) => ({
  id: tid,
  user_id: userId,
  provider_id: providerId,
  name: 'tracker',
  enabled: true,
  event_types: { probe_ping: true } as Record<string, boolean>,
  quiet_hours: null as null | { start: string; end: string; timezone: string },
  quiet_policies: { alert: 'defer' } as Record<string, string>,
  config: {} as Record<string, unknown>,
  created_at: TIME,
  updated_at: TIME,
  ...extra,
});
const target = (gid: string, kind: string, userId: string, config: Record<string, unknown>) => ({
  id: gid,
  user_id: userId,
  kind,
  name: 'target',
  config,
  locale: 'en',
  enabled: true,
  created_at: TIME,
  updated_at: TIME,
});
const bot = (bid: string, kind: string, userId: string, extra: Record<string, unknown> = {}) => ({
  id: bid,
  user_id: userId,
  kind,
  name: 'Bot',
  bot_id: null as string | null,
  username: null,
  mode: 'polling',
  created_at: TIME,
  updated_at: TIME,
  ...extra,
});
const action = (aid: string, kind: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: aid,
  user_id: U1,
  name: 'action',
  kind,
  schedule: '0 8 * * *',
  timezone: 'UTC',
  config,
  enabled: true,
  created_at: TIME,
  updated_at: TIME,
  ...extra,
});

/** A valid backup: two users, a provider of each plugin, a tracker, two targets, a bot, two actions. */
function base(): any {
  return {
    users: [user(U1, 'a@example.test'), user(U2, 'b@example.test')],
    providers: [
      provider(P1, 'hook', U1, { webhook_token: 'token-one-0123456789', config: { url: 'https://x', token: 's' } }),
      provider(P2, 'selfmon', U1),
    ],
    trackers: [
      tracker(T1, P1, U1, { quiet_hours: { start: '22:00', end: '07:00', timezone: 'UTC' }, config: { key: 'k' } }),
    ],
    targets: [target(G1, 'chat', U1, { chat: 'c1', bot_id: B1 }), target(G2, 'mail', U1, { to: 'x' })],
    tracker_targets: [{ tracker_id: T1, target_id: G1, user_id: U1, created_at: TIME }],
    bots: [bot(B1, 'chat', U1, { bot_id: '111', webhook_path_id: 'path-one-0123456789' })],
    bot_chats: [
      {
        id: C1,
        bot_id: B1,
        user_id: U1,
        chat_id: '5',
        type: 'private',
        title: null,
        username: null,
        is_forum: false,
        registered: true,
        last_seen_at: TIME,
        created_at: TIME,
      },
    ],
    actions: [
      action(A1, 'digest', { tracker_id: T1 }),
      action(A2, 'message', { target_ids: [G1, G2], title: 'T', body: 'B' }),
    ],
    templates: [
      {
        id: id(71),
        user_id: U1,
        event_type: 'probe_ping',
        locale: 'en',
        title: 'a',
        body: 'b',
        created_at: TIME,
        updated_at: TIME,
      },
    ],
    skills: [
      {
        id: id(81),
        owner_id: null,
        scope: 'general',
        name: 's',
        description: null,
        prompt: 'p',
        created_at: TIME,
        updated_at: TIME,
      },
      {
        id: id(82),
        owner_id: U2,
        scope: 'personal',
        name: 's',
        description: null,
        prompt: 'p',
        created_at: TIME,
        updated_at: TIME,
      },
    ],
    primary_context: { content: 'c', version: 1, updated_by: U1, updated_at: TIME },
    personal_contexts: [{ user_id: U1, content: 'c', updated_at: TIME }],
    settings: { default_max_chats: '20' },
    assistant_models: { models_allowed: [' m1 ', 'm2', 'm1', ''], default_model: ' m2 ' },
  };
}

const run = (c: unknown, core = makeCore()) => sanitizeConfiguration(core, c as ConfigurationT);

/** The problems the backup is refused for, as `path message` lines. */
function refused(t: Test, c: unknown, core = makeCore()): string[] {
  try {
    run(c, core);
  } catch (e) {
    const err = e as HttpError;
    t.equal(err.status, 422);
    t.equal(err.code, 'invalid_backup');
    return (err.errors ?? []).map((p) => `${p.path} ${p.message}`);
  }
  t.fail('the backup was not refused');
  return [];
}

t.test(
  'a valid backup passes, cleaned: defaults applied, the model choice normalized, the input untouched',
  async (t) => {
    const input = base();
    const before = structuredClone(input);
    const r = run(input);
    t.same(input, before, 'the input is not changed');
    t.same(r.skipped, []);
    t.same(r.warnings, []);
    t.same(r.config.providers[0]!.config, { url: 'https://x', token: 's', mode: 'a' });
    t.same(r.config.trackers[0]!.config, { key: 'k', filter: '*' });
    t.same(r.config.targets[1]!.config, { to: 'x' });
    t.same(r.config.assistant_models, { models_allowed: ['m1', 'm2'], default_model: 'm2' });
    t.equal(r.config.primary_context?.updated_by, U1, 'a known editor is kept');
    t.same(
      r.config.providers.map((p) => p.id),
      [P1, P2],
    );
    t.same(
      r.config.actions.map((a) => a.id),
      [A1, A2],
    );
    t.same(r.config.tracker_targets, before.tracker_targets);
    t.same(r.config.users, before.users);
    t.same(
      r.config.trackers.map((x) => x.id),
      [T1],
    );
    t.same(
      r.config.targets.map((x) => x.id),
      [G1, G2],
    );
  },
);

t.test('ids repeated within a table are refused, each repeat named', async (t) => {
  for (const table of [
    'users',
    'providers',
    'trackers',
    'targets',
    'bots',
    'bot_chats',
    'actions',
    'templates',
    'skills',
  ]) {
    const c = base();
    const list = c[table];
    const copy = { ...structuredClone(list[0]), id: list[0].id };
    list.push(copy);
    const problems = refused(t, c);
    t.ok(
      problems.includes(`/configuration/${table}/${list.length - 1} repeats the id of another record`),
      `${table}: ${problems.join('; ')}`,
    );
    t.notOk(
      problems.some((p) => p.startsWith(`/configuration/${table}/0 `)),
      'the first one is not',
    );
  }
});

t.test('unique keys within the backup', async (t) => {
  let c = base();
  c.users[1].email = '  A@Example.TEST ';
  t.same(refused(t, c), ['/configuration/users/1 repeats the email of another record'], 'emails, trimmed and any case');

  c = base();
  c.providers[1].webhook_token = c.providers[0].webhook_token;
  t.same(refused(t, c), ['/configuration/providers/1 repeats the webhook_token of another record']);
  c = base();
  c.providers.push(provider(id(13), 'hook', U1, { config: { url: 'https://y' } }));
  t.same(run(c).skipped, [], 'providers without a webhook token do not clash');

  c = base();
  c.providers.push(provider(id(13), 'selfmon', U1));
  t.same(refused(t, c), [
    '/configuration/providers/2 repeats the user of its self-monitoring provider (one per user) of another record',
  ]);
  c = base();
  c.providers.push(provider(id(13), 'selfmon', U2));
  c.providers.push(provider(id(14), 'hook', U1, { config: { url: 'https://y' } }));
  t.doesNotThrow(() => run(c), 'one self-monitoring provider per user; other kinds as many as wanted');

  c = base();
  c.bots.push(bot(id(42), 'chat', U1, { bot_id: '111' }));
  t.same(refused(t, c), ['/configuration/bots/1 repeats the bot_id of another record']);
  c = base();
  c.bots.push(bot(id(42), 'chat', U1, { bot_id: '222', webhook_path_id: 'path-one-0123456789' }));
  t.same(refused(t, c), ['/configuration/bots/1 repeats the webhook_path_id of another record']);
  c = base();
  c.bots.push(bot(id(42), 'chat', U1), bot(id(43), 'chat', U1));
  t.doesNotThrow(() => run(c), 'bots without a bot_id or path id do not clash');

  c = base();
  c.bot_chats.push({ ...c.bot_chats[0], id: id(52) });
  t.same(refused(t, c), ['/configuration/bot_chats/1 repeats the bot and chat of another record']);
  c = base();
  c.bot_chats.push({ ...c.bot_chats[0], id: id(52), chat_id: '6' });
  t.doesNotThrow(() => run(c));

  c = base();
  c.tracker_targets.push({ ...c.tracker_targets[0] });
  t.same(refused(t, c), ['/configuration/tracker_targets/1 repeats the tracker and target of another record']);
  c = base();
  c.tracker_targets.push({ ...c.tracker_targets[0], target_id: G2 });
  t.doesNotThrow(() => run(c));

  c = base();
  c.templates.push({ ...c.templates[0], id: id(72) });
  t.same(refused(t, c), ['/configuration/templates/1 repeats the user, event type and locale of another record']);
  c = base();
  c.templates.push({ ...c.templates[0], id: id(72), locale: 'ru' });
  t.doesNotThrow(() => run(c));

  c = base();
  c.personal_contexts.push({ ...c.personal_contexts[0] });
  t.same(refused(t, c), ['/configuration/personal_contexts/1 repeats the user of another record']);
});

t.test('every record belongs to a user of the backup', async (t) => {
  const rows: [string, string[]][] = [
    ['providers', ['/configuration/trackers/0/provider_id names a provider of this user that is not in the backup']],
    [
      'trackers',
      [
        '/configuration/trackers/0/provider_id names a provider of this user that is not in the backup',
        '/configuration/tracker_targets/0/tracker_id names a tracker of this user that is not in the backup',
        '/configuration/actions/0/config names a tracker of this user that is not in the backup',
      ],
    ],
    [
      'targets',
      [
        '/configuration/tracker_targets/0/target_id names a target of this user that is not in the backup',
        '/configuration/targets/0/config/bot_id names a bot of this user that is not in the backup',
        '/configuration/actions/1/config names a target of this user that is not in the backup',
      ],
    ],
    [
      'tracker_targets',
      [
        '/configuration/tracker_targets/0/tracker_id names a tracker of this user that is not in the backup',
        '/configuration/tracker_targets/0/target_id names a target of this user that is not in the backup',
      ],
    ],
    [
      'bots',
      [
        '/configuration/bot_chats/0/bot_id names a bot of this user that is not in the backup',
        '/configuration/targets/0/config/bot_id names a bot of this user that is not in the backup',
      ],
    ],
    ['bot_chats', ['/configuration/bot_chats/0/bot_id names a bot of this user that is not in the backup']],
    [
      'actions',
      [
        '/configuration/actions/0/config names a tracker of this user that is not in the backup',
        '/configuration/actions/1/config names a target of this user that is not in the backup',
      ],
    ],
    ['templates', []],
    ['personal_contexts', []],
  ];
  for (const [table, more] of rows) {
    const c = base();
    for (const r of c[table]) r.user_id = NOBODY;
    const owners = c[table].map(
      (_: unknown, i: number) => `/configuration/${table}/${i}/user_id names a user that is not in the backup`,
    );
    t.same(refused(t, c).sort(), [...owners, ...more].sort(), table);
  }
});

t.test('references point at records of the same user', async (t) => {
  let c = base();
  c.trackers[0].provider_id = NOBODY;
  t.same(refused(t, c), [
    '/configuration/trackers/0/provider_id names a provider of this user that is not in the backup',
  ]);

  c = base();
  c.providers[0].user_id = U2;
  t.same(refused(t, c), [
    '/configuration/trackers/0/provider_id names a provider of this user that is not in the backup',
  ]);

  c = base();
  c.tracker_targets[0].tracker_id = NOBODY;
  t.same(refused(t, c), [
    '/configuration/tracker_targets/0/tracker_id names a tracker of this user that is not in the backup',
  ]);
  c = base();
  c.tracker_targets[0].target_id = G2;
  t.doesNotThrow(() => run(c));
  c.tracker_targets[0].target_id = NOBODY;
  t.same(refused(t, c), [
    '/configuration/tracker_targets/0/target_id names a target of this user that is not in the backup',
  ]);

  c = base();
  c.bot_chats[0].bot_id = NOBODY;
  t.same(refused(t, c), ['/configuration/bot_chats/0/bot_id names a bot of this user that is not in the backup']);
  c = base();
  c.bot_chats[0].user_id = U2;
  t.same(refused(t, c), ['/configuration/bot_chats/0/bot_id names a bot of this user that is not in the backup']);
});

t.test('skills: a general one has no owner, a personal one an owner of the backup', async (t) => {
  let c = base();
  c.skills[0].owner_id = U1;
  t.same(refused(t, c), [
    '/configuration/skills/0/owner_id must be null for general skills and a user for personal ones',
  ]);
  c = base();
  c.skills[1].owner_id = null;
  t.same(refused(t, c), [
    '/configuration/skills/1/owner_id must be null for general skills and a user for personal ones',
  ]);
  c = base();
  c.skills[1].owner_id = NOBODY;
  t.same(refused(t, c), ['/configuration/skills/1/owner_id names a user that is not in the backup']);
});

t.test('the primary context: an editor not in the backup is forgotten', async (t) => {
  let c = base();
  c.primary_context.updated_by = NOBODY;
  t.equal(run(c).config.primary_context?.updated_by, null);
  c = base();
  c.primary_context.updated_by = null;
  t.equal(run(c).config.primary_context?.updated_by, null);
  c = base();
  c.primary_context = null;
  t.equal(run(c).config.primary_context, null);
});

t.test('settings are checked by the rules of the API', async (t) => {
  const c = base();
  c.settings = { default_max_chats: '-1', nonsense: 'x', backup_secrets_mode: 'exclude' };
  t.same(refused(t, c), [
    '/configuration/settings/default_max_chats must be a whole number from 0 to 100000, written as a string',
    '/configuration/settings/nonsense is not a known setting',
  ]);
});

t.test('the model choice: ids trimmed and each once, the default one of them', async (t) => {
  let c = base();
  c.assistant_models = { models_allowed: ['m1'], default_model: 'm3' };
  t.same(refused(t, c), ['/configuration/assistant_models/default_model must be one of models_allowed']);
  c = base();
  c.assistant_models = { models_allowed: ['m1'], default_model: null };
  t.same(run(c).config.assistant_models, { models_allowed: ['m1'], default_model: null });
  c.assistant_models = { models_allowed: [], default_model: '  ' };
  t.same(run(c).config.assistant_models, { models_allowed: [], default_model: null }, 'a blank default is none');
  c.assistant_models = { models_allowed: [], default_model: 'any' };
  t.same(run(c).config.assistant_models, { models_allowed: [], default_model: 'any' }, 'any model without a list');
  delete c.assistant_models;
  t.equal(run(c).config.assistant_models, undefined, 'absent stays absent');
});

t.test('providers: kinds not enabled are skipped, with what depends on them', async (t) => {
  const c = base();
  c.providers[0].kind = 'oldkind';
  c.providers[0].stray = 'whatever';
  c.targets.push(target(id(33), 'chat', U1, { chat: 'c2' }));
  c.tracker_targets.push({ tracker_id: T1, target_id: id(33), user_id: U1, created_at: TIME });
  const r = run(c);
  t.same(r.skipped, [
    { table: 'providers', id: P1, reason: 'provider kind "oldkind" is not enabled on this service' },
    { table: 'trackers', id: T1, reason: 'its provider is skipped (kind "oldkind" is not enabled)' },
    { table: 'tracker_targets', id: `${T1}/${G1}`, reason: 'its tracker or target is skipped' },
    { table: 'tracker_targets', id: `${T1}/${id(33)}`, reason: 'its tracker or target is skipped' },
    { table: 'actions', id: A1, reason: 'it uses a tracker that is skipped' },
  ]);
  t.same(
    r.config.providers.map((p) => p.id),
    [P2],
  );
  t.same(r.config.trackers, []);
  t.same(r.config.tracker_targets, []);
  t.same(
    r.config.actions.map((a) => a.id),
    [A2],
  );
  t.same(
    r.config.targets.map((x) => x.id),
    [G1, G2, id(33)],
    'the targets stay',
  );
  t.equal(r.config.providers.length, 1);
});

t.test('providers: top-level fields beside the known ones', async (t) => {
  let c = base();
  c.providers[0].token = 'from-top';
  c.providers[0].other_null = null;
  c.providers[0].other_false = false;
  let r = run(c);
  t.same(r.config.providers[0]!.config, { url: 'https://x', token: 'from-top', mode: 'a' }, 'an alias wins');
  const rec = r.config.providers[0] as unknown as Record<string, unknown>;
  t.notOk('token' in rec || 'other_null' in rec || 'other_false' in rec, 'and the top-level fields go');
  t.equal(rec.webhook_token, 'token-one-0123456789', 'the known fields stay');
  t.equal(rec.enabled, true);

  c = base();
  c.providers[0].token = null;
  r = run(c);
  t.same(r.config.providers[0]!.config, { url: 'https://x', token: 's', mode: 'a' }, 'an empty alias is not folded');
  t.notOk('token' in (r.config.providers[0] as object));

  c = base();
  c.providers[0].legacy = 'on';
  c.providers[0].flag = true;
  c.providers[0].nothing = '';
  t.same(refused(t, c), [
    '/configuration/providers/0/legacy does not apply to "hook" providers',
    '/configuration/providers/0/flag does not apply to "hook" providers',
    '/configuration/providers/0/nothing does not apply to "hook" providers',
  ]);
});

t.test('providers: configs are checked against the plugin schema, then by the plugin', async (t) => {
  let c = base();
  c.providers[0].config = { url: 'ab', extra: 1, meta: { z: 1 } };
  t.same(refused(t, c), [
    '/configuration/providers/0/config/extra is not a field of this configuration',
    '/configuration/providers/0/config/url must not have fewer than 3 characters',
    '/configuration/providers/0/config/meta has fields that are not allowed: z',
  ]);

  c = base();
  c.providers[0].config = { url: 'plugin-refuses' };
  t.same(refused(t, c), ['/configuration/providers/0/config/url is refused by the plugin']);
  c.providers[0].config = { url: 'plugin-refuses-all' };
  t.same(refused(t, c), ['/configuration/providers/0/config is refused as a whole']);
  c.providers[0].config = { url: 'plugin-refuses' };
  c.providers[0].secrets_omitted = ['/config/url'];
  t.doesNotThrow(() => run(c), "the plugin's problems at a field left out do not count");
  c.providers[0].config = { url: 'plugin-refuses-all' };
  c.providers[0].secrets_omitted = ['/config/token'];
  t.same(refused(t, c), ['/configuration/providers/0/config is refused as a whole'], 'only there');
  c.providers[0].secrets_omitted = ['/config'];
  t.doesNotThrow(() => run(c), 'nor anywhere when the whole config was left out');

  c = base();
  c.providers[0].config = { url: 1 };
  c.providers[0].secrets_omitted = ['/config/url'];
  t.doesNotThrow(() => run(c), 'schema errors at a field left out do not count');
  c.providers[0].config = { url: 'plugin-refuses' };
  c.providers[0].secrets_omitted = ['/other/url'];
  t.same(
    refused(t, c),
    ['/configuration/providers/0/config/url is refused by the plugin'],
    'pointers outside the config',
  );
  c.providers[0].config = { url: 1, token: 2 };
  c.providers[0].secrets_omitted = ['/config/url'];
  t.same(refused(t, c), ['/configuration/providers/0/config/token must be string']);
  c.providers[0].config = { url: 'ab' };
  c.providers[0].secrets_omitted = ['/configx'];
  t.same(refused(t, c), ['/configuration/providers/0/config/url must not have fewer than 3 characters']);
});

t.test('validateConfig: defaults, undeclared fields, and the places a backup left out', async (t) => {
  const s = hookSchema as TSchema;
  t.same(validateConfig(s, { url: 'abc' }, []), { value: { url: 'abc', mode: 'a' }, errors: [] });
  t.same(validateConfig(s, { url: 'abc', x: 1 }, []), {
    value: { url: 'abc', mode: 'a' },
    errors: [{ path: '/x', message: 'is not a field of this configuration' }],
  });
  t.same(
    validateConfig(s, { x: 1 }, ['']),
    {
      value: { mode: 'a' },
      errors: [{ path: '/x', message: 'is not a field of this configuration' }],
    },
    'all left out: only undeclared fields count',
  );
  t.same(validateConfig(s, {}, []).errors, [{ path: '/', message: 'must have required properties url' }]);
  t.same(validateConfig(s, {}, ['/url']).errors, [], 'a required field left out');
  t.same(validateConfig(s, { url: 'abc', creds: {} }, []).errors, [
    { path: '/creds', message: 'must have required properties user, a/b~c' },
  ]);
  t.same(
    validateConfig(s, { url: 'abc', creds: {} }, ['/creds/user', '/creds/a~1b~0c']).errors,
    [],
    'each missing field left out (names escaped as JSON pointers)',
  );
  t.same(
    validateConfig(s, { url: 'abc', creds: {} }, ['/creds/user']).errors,
    [{ path: '/creds', message: 'must have required properties user, a/b~c' }],
    'one of two left out',
  );
  t.same(validateConfig(s, { url: 'abc', creds: {} }, ['/creds/user', '/creds/a/b~c']).errors.length, 1);
  t.same(validateConfig(s, { url: 'abc', creds: { user: 'u' } }, ['/creds/a~1b~0c']).errors, []);
  t.same(validateConfig(s, { url: 'abc', creds: { 'a/b~c': 'x' } }, ['/creds/user']).errors, []);
  t.same(validateConfig(s, { url: 'abc', creds: { 'a/b~c': 'x' } }, ['/creds/a~1b~0c']).errors, [
    { path: '/creds', message: 'must have required properties user' },
  ]);
  t.same(validateConfig(s, { url: 'abc', meta: { z: 1, y: 2 } }, []).errors, [
    { path: '/meta', message: 'has fields that are not allowed: z, y' },
  ]);
  t.same(validateConfig(s, { url: 'abc', meta: { z: 1 } }, ['/meta/z']).errors, [
    { path: '/meta', message: 'has fields that are not allowed: z' },
  ]);
  const e = validateConfig(s, { url: 'abc', meta: { z: 1 } }, ['/meta']);
  t.same(e.errors, [], 'the object itself left out');
  const sameSchema = validateConfig(s, { url: 'abc' }, []);
  t.same(sameSchema.errors, [], 'a schema compiled before is reused');
  const other = Type.Object({ n: Type.Integer() });
  t.same(validateConfig(other, { n: 'x' }, []).errors, [{ path: '/n', message: 'must be integer' }]);
  t.same(validateConfig(other, { n: 1 }, []).errors, [], 'each schema has its own compiled check');
  t.same(validateConfig(s, { n: 1, url: 'abc' }, []).errors.length, 1);
});

t.test('trackers: event types of the provider, quiet hours, config', async (t) => {
  let c = base();
  c.trackers[0].event_types = { probe_ping: true, nope: false };
  c.trackers[0].quiet_policies = { alert: 'send', zap: 'drop' };
  t.same(refused(t, c), [
    '/configuration/trackers/0/event_types/nope is not an event type of "hook"',
    '/configuration/trackers/0/quiet_policies/zap is not an event type of "hook"',
  ]);
  c = base();
  c.trackers[0].quiet_hours = { start: '22:00', end: '22:00', timezone: 'UTC' };
  t.same(refused(t, c), ['/configuration/trackers/0/quiet_hours quiet_hours.start and quiet_hours.end must differ']);
  c = base();
  c.trackers[0].quiet_hours = null;
  t.doesNotThrow(() => run(c));
  c = base();
  c.trackers[0].config = { key: 1, extra: 'x' };
  t.same(refused(t, c), [
    '/configuration/trackers/0/config/extra is not a field of this configuration',
    '/configuration/trackers/0/config/key must be string',
  ]);
  c.trackers[0].config = { key: 1 };
  c.trackers[0].secrets_omitted = ['/config/key'];
  t.same(run(c).config.trackers[0]!.config, { key: 1, filter: '*' }, 'a field left out');
  c.trackers[0].config = [];
  c.trackers[0].secrets_omitted = undefined;
  t.same(refused(t, c), ['/configuration/trackers/0/config must be object']);

  c = base();
  c.trackers[0].provider_id = NOBODY;
  c.trackers[0].event_types = { nope: true };
  t.same(
    refused(t, c),
    ['/configuration/trackers/0/provider_id names a provider of this user that is not in the backup'],
    'a tracker without its provider is not checked further',
  );

  c = base();
  c.providers[1].kind = 'gone';
  c.trackers.push(tracker(id(22), P2, U1, { event_types: { pf: true } }));
  t.same(run(c).skipped.slice(0, 2), [
    { table: 'providers', id: P2, reason: 'provider kind "gone" is not enabled on this service' },
    { table: 'trackers', id: id(22), reason: 'its provider is skipped (kind "gone" is not enabled)' },
  ]);
  t.same(
    run(c).config.trackers.map((x) => x.id),
    [T1],
  );
});

t.test('targets: kinds not enabled are skipped; configs checked; a bot of the same user and kind', async (t) => {
  let c = base();
  c.targets[0].kind = 'pager';
  const r = run(c);
  t.same(r.skipped, [
    { table: 'targets', id: G1, reason: 'target kind "pager" is not enabled on this service' },
    { table: 'tracker_targets', id: `${T1}/${G1}`, reason: 'its tracker or target is skipped' },
    { table: 'actions', id: A2, reason: 'it uses a target that is skipped' },
  ]);
  t.same(
    r.config.targets.map((x) => x.id),
    [G2],
  );
  t.same(r.config.tracker_targets, []);
  t.same(
    r.config.actions.map((a) => a.id),
    [A1],
  );
  t.same(
    r.config.trackers.map((x) => x.id),
    [T1],
    'the tracker stays',
  );

  c = base();
  c.targets[0].config = { chat: '', extra: 1 };
  t.same(refused(t, c), [
    '/configuration/targets/0/config/extra is not a field of this configuration',
    '/configuration/targets/0/config/chat must not have fewer than 1 characters',
  ]);
  c = base();
  c.targets[0].config = { chat: 'c', bot_id: B1, url: 'plugin-refuses' };
  t.same(refused(t, c), ['/configuration/targets/0/config/url is refused by the plugin']);
  c.targets[0].config = { chat: 'c', bot_id: B1, url: 'plugin-refuses-all' };
  t.same(refused(t, c), ['/configuration/targets/0/config is refused as a whole']);
  c.targets[0].secrets_omitted = ['/config/chat'];
  t.same(refused(t, c), ['/configuration/targets/0/config is refused as a whole']);
  c.targets[0].secrets_omitted = ['/config'];
  t.doesNotThrow(() => run(c));
  c.targets[0].config = { chat: 'c', bot_id: B1, url: 'plugin-refuses' };
  c.targets[0].secrets_omitted = ['/config/url'];
  t.doesNotThrow(() => run(c));
  c.targets[0].config = { bot_id: B1, url: 'plugin-refuses' };
  c.targets[0].secrets_omitted = ['/config/chat'];
  t.same(
    refused(t, c),
    ['/configuration/targets/0/config/url is refused by the plugin'],
    "a schema error left out: the plugin's own check still runs",
  );
  c.targets[0].config = { chat: 1, url: 'plugin-refuses', bot_id: B1 };
  c.targets[0].secrets_omitted = [];
  t.same(refused(t, c), ['/configuration/targets/0/config/chat must be string'], 'no plugin check after schema errors');

  c = base();
  c.targets[0].config = { chat: 'c', bot_id: 41 };
  t.same(refused(t, c), ['/configuration/targets/0/config/bot_id names a bot of this user that is not in the backup']);
  c.targets[0].config = { chat: 'c', bot_id: NOBODY };
  t.same(refused(t, c), ['/configuration/targets/0/config/bot_id names a bot of this user that is not in the backup']);
  c.targets[0].config = { chat: 'c' };
  t.doesNotThrow(() => run(c), 'no bot');
  c = base();
  c.bots[0].user_id = U2;
  c.bot_chats = [];
  t.same(refused(t, c), ['/configuration/targets/0/config/bot_id names a bot of this user that is not in the backup']);
  c = base();
  c.targets[1].config = { to: 'x', bot_id: B1 };
  t.same(refused(t, c), ['/configuration/targets/1/config/bot_id names a chat bot, but this is a mail target']);
});

t.test(
  'bots: webhook mode needs the webhook secret; a kind not enabled is restored idle, with a warning',
  async (t) => {
    let c = base();
    c.bots[0].mode = 'webhook';
    t.same(refused(t, c), [
      '/configuration/bots/0/mode is webhook, but SERVICE_MESSAGING_WEBHOOK_SECRET is not set on this service; ' +
        'set it before restoring',
    ]);
    t.doesNotThrow(() => run(c, makeCore({ webhookSecret: 'secret' })));
    c = base();
    c.bots.push(bot(id(42), 'pager', U1), bot(id(43), 'mail', U1));
    const r = run(c);
    t.same(r.warnings, [
      `bot "Bot" (${id(42)}) is of kind "pager", which is not enabled here; it is restored but stays idle until its ` +
        'plugin is enabled',
      `bot "Bot" (${id(43)}) is of kind "mail", which is not enabled here; it is restored but stays idle until its ` +
        'plugin is enabled',
    ]);
    t.same(r.config.bots.length, 3);
  },
);

t.test('actions: time zone, schedule, config and what they name', async (t) => {
  let c = base();
  c.actions[0].timezone = 'Mars/Olympus';
  c.actions[0].schedule = 'not a schedule';
  c.actions[0].config = { x: 1 };
  t.same(refused(t, c), ['/configuration/actions/0/timezone is not an IANA time zone'], 'the first problem only');
  c = base();
  c.actions[0].schedule = '0 8 * *';
  c.actions[0].config = { x: 1 };
  t.same(refused(t, c), [
    '/configuration/actions/0/schedule schedule "0 8 * *" must have 5 fields (minute hour day month weekday) or 6 ' +
      '(with seconds first)',
  ]);
  c = base();
  c.actions[0].config = { tracker_id: 'x', other: 1 };
  const problems = refused(t, c);
  t.ok(
    problems.length >= 1 && problems.every((p) => p.startsWith('/configuration/actions/0/config')),
    problems.join('; '),
  );
  c = base();
  c.actions[1].config = {
    target_ids: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
    title: 1,
    body: 2,
    x: 1,
    y: 2,
  };
  const many = refused(t, c);
  t.equal(many.length, 5, 'at most five problems of one config');
  t.ok(
    many.some((p) => p.startsWith('/configuration/actions/1/config/target_ids/')),
    'paths inside the config',
  );

  c = base();
  c.actions[0].config = { tracker_id: NOBODY };
  c.actions[1].user_id = U2;
  t.same(refused(t, c), [
    '/configuration/actions/0/config names a tracker of this user that is not in the backup',
    '/configuration/actions/1/config names a target of this user that is not in the backup',
  ]);
  c = base();
  c.actions[1].config = { target_ids: [G2, NOBODY], title: 'T', body: 'B' };
  t.same(refused(t, c), ['/configuration/actions/1/config names a target of this user that is not in the backup']);
  c = base();
  c.actions.push(action(id(63), 'ai_digest', { target_ids: [G2] }));
  t.same(
    run(c).config.actions.map((a) => a.id),
    [A1, A2, id(63)],
  );
  c.actions[2].config = { target_ids: [G1, G2] };
  c.targets[1].kind = 'pager';
  const r = run(c);
  t.same(
    r.skipped.filter((s) => s.table === 'actions'),
    [
      { table: 'actions', id: A2, reason: 'it uses a target that is skipped' },
      { table: 'actions', id: id(63), reason: 'it uses a target that is skipped' },
    ],
  );
  t.same(
    r.config.actions.map((a) => a.id),
    [A1],
  );
  c = base();
  c.actions[1].config = { target_ids: [G2, NOBODY], title: 'T', body: 'B' };
  c.targets[1].kind = 'pager';
  t.same(
    run(c).skipped.filter((s) => s.table === 'actions'),
    [{ table: 'actions', id: A2, reason: 'it uses a target that is skipped' }],
    'the targets are taken in order: a skipped one first skips the action',
  );
  c.actions[1].config = { target_ids: [NOBODY, G2], title: 'T', body: 'B' };
  t.same(
    refused(t, c),
    ['/configuration/actions/1/config names a target of this user that is not in the backup'],
    'a missing one first refuses it',
  );
});

t.test("the refusal's detail names the first five problems and counts the rest; at most 50 are kept", async (t) => {
  const detail = (c: unknown) => {
    try {
      run(c);
    } catch (e) {
      return { message: (e as Error).message, count: (e as HttpError).errors?.length };
    }
    return undefined;
  };
  const withUsers = (n: number) => {
    const c = base();
    for (let i = 0; i < n; i++) c.skills.push({ ...c.skills[0], id: id(100 + i), owner_id: NOBODY, scope: 'personal' });
    return c;
  };
  const line = (i: number) => `/configuration/skills/${i + 2}/owner_id names a user that is not in the backup`;
  t.same(detail(withUsers(1)), { message: `The backup was refused: ${line(0)}.`, count: 1 });
  t.same(detail(withUsers(5)), {
    message: `The backup was refused: ${[0, 1, 2, 3, 4].map(line).join('; ')}.`,
    count: 5,
  });
  t.same(detail(withUsers(6)), {
    message: `The backup was refused: ${[0, 1, 2, 3, 4].map(line).join('; ')} (and 1 more).`,
    count: 6,
  });
  t.same(detail(withUsers(49))?.count, 49);
  t.same(detail(withUsers(50))?.count, 50);
  t.same(detail(withUsers(60)), {
    message: `The backup was refused: ${[0, 1, 2, 3, 4].map(line).join('; ')} (and 45 more).`,
    count: 50,
  });
});

t.test('emails are compared as the service stores them (trimmed, lower case)', async (t) => {
  const c = base();
  c.users[0].email = 'straße@example.test';
  c.users[1].email = 'STRASSE@example.test';
  t.doesNotThrow(() => run(c), '"ß" and "SS" are different addresses in lower case');
  c.users[1].email = ' STRASSE@example.test ';
  c.users.push(user(id(3), 'strasse@example.test'));
  t.same(refused(t, c), ['/configuration/users/2 repeats the email of another record']);
});

t.test('a service without a self-monitoring plugin', async (t) => {
  const c = base();
  c.providers[1].kind = 'other';
  c.providers.push(provider(id(13), 'other', U1));
  const r = run(c, makeCore({ withoutSelfMonitoring: true }));
  t.same(
    r.skipped.map((s) => s.id),
    [P2, id(13)],
    'no provider kind counts as the self-monitoring one: two of a kind for a user are skipped, not refused',
  );
});

t.test('a config refused as a whole is reported at the config itself', async (t) => {
  let c = base();
  c.providers[0].config = {};
  t.same(refused(t, c), ['/configuration/providers/0/config must have required properties url']);
  c = base();
  c.targets[0].config = { bot_id: B1 };
  t.same(refused(t, c), ['/configuration/targets/0/config must have required properties chat']);
  t.same(validateConfig(hookSchema, { url: 1, mode: 2 }, ['']).errors, [], 'all left out: no schema error counts');
  t.same(validateConfig(hookSchema, { url: 1 }, ['/url']).errors, []);
});

t.test("a provider's plugin check runs only on a config its schema accepts", async (t) => {
  const c = base();
  c.providers[0].config = { url: 'plugin-refuses', mode: 2 };
  t.same(refused(t, c), ['/configuration/providers/0/config/mode must be string']);
  c.providers[0].config = { url: 'plugin-refuses', mode: 'b' };
  t.same(refused(t, c), ['/configuration/providers/0/config/url is refused by the plugin']);
});

t.test('a bot_id that is not a string names no bot, whatever the ids of the bots', async (t) => {
  const c = base();
  c.bots[0].id = 41;
  c.bot_chats = [];
  c.targets[0].config = { chat: 'c', bot_id: 41 };
  t.same(refused(t, c), ['/configuration/targets/0/config/bot_id names a bot of this user that is not in the backup']);
});
