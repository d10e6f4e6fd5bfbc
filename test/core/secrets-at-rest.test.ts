/**
 * Secrets at rest, end to end (`npm test` runs this file on SQLite and PostgreSQL): bot tokens and
 * plugin `Secret()` values are sealed in every row the service writes (create, update, restore,
 * the boot step over an earlier version's clear values), opened only where they are used (a
 * webhook checked with the provider's token, a delivery sent with the target's token), carried
 * sealed by include backups, refused under a wrong key, and moved to a new key by a rotation.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { checksumOf } from '../../core/src/backup/envelope.ts';
import { newId, randomToken } from '../../core/src/http/ids.ts';
import { SecretsAtRest } from '../../core/src/secrets/at-rest.ts';
import { exportNow, upload } from '../backup/support.ts';
import { postgresDatabaseUrl, startService, startSink, type TestService, unsealed } from '../helpers/service.ts';

const SECRET = {
  shared: 'example-shared-at-rest-1',
  api: 'recorder-token-at-rest-2',
  tracker: 'tracker-key-at-rest-3',
  bot: '4242:bot-token-at-rest-4',
};
type Sink = Awaited<ReturnType<typeof startSink>>;
interface Chain {
  user: { token: string; id: string };
  provider: any;
  tracker: any;
  target: any;
  hook: string;
  botId: string;
}

const dir = (t: Test) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-at-rest-'));
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};

async function ok(p: Promise<{ status: number; body: any; text: string }>, what: string): Promise<any> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * A user's chain through the API: example provider (shared token) → tracker (access key) → recorder target (API token,
 * posting to the sink); and a bot written as the service stores one.
 */
async function chain(s: TestService, sink: Sink): Promise<Chain> {
  const user = await s.user();
  const u = user.token;
  const provider = await ok(
    s.request('POST', '/api/providers', {
      token: u,
      body: { kind: 'example', name: 'Source', config: { shared_token: SECRET.shared } },
    }),
    'provider',
  );
  const tracker = await ok(
    s.request('POST', '/api/trackers', {
      token: u,
      body: { provider_id: provider.id, name: 'All', config: { tag: 'x', access_key: SECRET.tracker } },
    }),
    'tracker',
  );
  const target = await ok(
    s.request('POST', '/api/targets', {
      token: u,
      body: { kind: 'recorder', name: 'Sink', config: { url: sink.url, api_token: SECRET.api }, locale: 'en' },
    }),
    'target',
  );
  await ok(s.request('PUT', `/api/trackers/${tracker.id}/targets/${target.id}`, { token: u }), 'link');
  const botId = newId();
  const now = new Date().toISOString();
  await s.service.core.db.run(
    'INSERT INTO bots (id, user_id, kind, name, token, bot_id, username, mode, webhook_path_id, status, ' +
      `created_at, updated_at) VALUES (?, ?, 'telegram', 'Bot', ?, '4242', 'at_rest_bot', 'polling', ?, 'ok', ?, ?)`,
    [botId, user.id, s.service.core.atRest.seal(SECRET.bot), randomToken(), now, now],
  );
  return { user, provider, tracker, target, hook: `/api/hooks/${provider.webhook_url.split('/api/hooks/')[1]}`, botId };
}

/** The secret columns of every row, as stored. */
async function raw(
  s: TestService,
): Promise<{ provider: string; tracker: string; target: string; bot: string; text: string }> {
  const db = s.service.core.db;
  const rows = [
    ...(await db.all(`SELECT config AS v FROM providers WHERE kind = 'example'`)),
    ...(await db.all('SELECT config AS v FROM trackers')),
    ...(await db.all('SELECT config AS v FROM targets')),
    ...(await db.all('SELECT token AS v FROM bots')),
  ];
  const one = async (sql: string) => String((await db.get<{ v: string }>(sql))?.v);
  return {
    provider: JSON.parse(await one(`SELECT config AS v FROM providers WHERE kind = 'example'`)).shared_token,
    tracker: JSON.parse(
      await one(
        `SELECT t.config AS v FROM trackers t JOIN providers p ON p.id = t.provider_id WHERE p.kind = 'example'`,
      ),
    ).access_key,
    target: JSON.parse(await one('SELECT config AS v FROM targets')).api_token,
    bot: await one('SELECT token AS v FROM bots'),
    text: JSON.stringify(rows),
  };
}

/** Every secret is stored sealed, and opens to its clear value with `atRest` (the service's own by default). */
async function allSealed(t: Test, s: TestService, what: string, atRest = s.service.core.atRest): Promise<void> {
  const r = await raw(s);
  for (const v of Object.values(SECRET)) t.notOk(r.text.includes(v), `${what}: ${v.slice(0, 12)}… not in clear`);
  const open = (v: string) => (v.startsWith('enc:v1:') ? atRest.open(v) : `not sealed: ${v.slice(0, 8)}`);
  t.same(
    { provider: open(r.provider), tracker: open(r.tracker), target: open(r.target), bot: open(r.bot) },
    { provider: SECRET.shared, tracker: SECRET.tracker, target: SECRET.api, bot: SECRET.bot },
    `${what}: sealed, and they open to the secrets`,
  );
}

/** A webhook signed with the provider's token reaches the sink through the target, carrying the target's token. */
async function works(t: Test, s: TestService, c: Chain, sink: Sink, what: string): Promise<void> {
  const before = sink.received.length;
  const wrong = await s.request('POST', c.hook, {
    body: { type: 'alarm', payload: { name: 'x' } },
    headers: { 'x-example-token': 'not-the-shared-token' },
  });
  t.equal(wrong.status, 401, `${what}: a wrong provider token is refused`);
  const r = await s.request('POST', c.hook, {
    body: { type: 'alarm', payload: { name: what } },
    headers: { 'x-example-token': SECRET.shared },
  });
  t.equal(r.status, 202, `${what}: the provider checks the webhook with its opened token`);
  const got = (await sink.waitFor(before + 1, 10_000))[before];
  t.equal(got?.headers.authorization, `Bearer ${SECRET.api}`, `${what}: the target sent with its opened token`);
}

t.test('create and update seal every secret; the service opens them where they are used', async (t) => {
  const sink = await startSink();
  const s = await startService();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await chain(s, sink);
  await allSealed(t, s, 'after create');
  t.same(c.tracker.config, { tag: 'x', access_key: '********' }, 'a tracker secret is masked');
  t.same(c.tracker.secrets_set, ['access_key']);

  const u = c.user.token;
  await ok(
    s.request('PATCH', `/api/providers/${c.provider.id}`, { token: u, body: { name: 'Renamed' } }),
    'rename provider',
  );
  await ok(
    s.request('PATCH', `/api/trackers/${c.tracker.id}`, {
      token: u,
      body: { name: 'Renamed', config: { tag: 'y', access_key: '********' } },
    }),
    'masked tracker secret',
  );
  await ok(
    s.request('PATCH', `/api/targets/${c.target.id}`, {
      token: u,
      body: { config: { url: sink.url, api_token: '********' } },
    }),
    'masked target secret',
  );
  await allSealed(t, s, 'after updates that keep the secrets');
  const first = await raw(s);
  await ok(
    s.request('PATCH', `/api/targets/${c.target.id}`, {
      token: u,
      body: { config: { url: sink.url, api_token: 'enc:v1:typed-by-a-user' } },
    }),
    'a value that looks sealed',
  );
  t.equal(
    unsealed(s, (await raw(s)).target),
    'enc:v1:typed-by-a-user',
    'what a user types is sealed, never taken for a stored value',
  );
  await ok(
    s.request('PATCH', `/api/targets/${c.target.id}`, {
      token: u,
      body: { config: { url: sink.url, api_token: SECRET.api } },
    }),
    'new target secret',
  );
  t.not((await raw(s)).target, first.target, 'a new value is sealed afresh');
  await allSealed(t, s, 'after a new secret');

  t.same(
    (await s.service.core.plugins.trackerViews(c.provider.id, 'example'))[0]!.config,
    { tag: 'y', access_key: SECRET.tracker },
    'the plugin sees its tracker secret in clear',
  );
  await works(t, s, c, sink, 'created');
  const test = await s.request('POST', `/api/targets/${c.target.id}/test`, { token: u });
  t.equal(test.body.ok, true, 'a test send uses the opened token');
  t.equal(sink.received.at(-1)?.headers.authorization, `Bearer ${SECRET.api}`);
  for (const r of [
    await s.request('GET', `/api/providers/${c.provider.id}`, { token: u }),
    await s.request('GET', `/api/targets/${c.target.id}`, { token: u }),
    await s.request('GET', `/api/trackers/${c.tracker.id}`, { token: u }),
  ]) {
    t.notMatch(r.text, /enc:v1:|at-rest-/, 'responses show the mask, neither the secret nor its sealed form');
  }
});

t.test('boot seals the clear values an earlier version stored, once, and writes the key check', async (t) => {
  const sink = await startSink();
  const d = dir(t);
  let s = await startService({}, { dataDir: d });
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const c = await chain(s, sink);
  // What this database looked like before this version: every secret in clear, no key check.
  const db = s.service.core.db;
  await db.run('UPDATE providers SET config = ? WHERE id = ?', [
    JSON.stringify({ shared_token: SECRET.shared, label: 'example' }),
    c.provider.id,
  ]);
  await db.run('UPDATE trackers SET config = ? WHERE id = ?', [
    JSON.stringify({ tag: 'x', access_key: SECRET.tracker }),
    c.tracker.id,
  ]);
  await db.run('UPDATE targets SET config = ? WHERE id = ?', [
    JSON.stringify({ url: sink.url, api_token: SECRET.api }),
    c.target.id,
  ]);
  await db.run('UPDATE bots SET token = ? WHERE id = ?', [SECRET.bot, c.botId]);
  await db.run('DELETE FROM secret_key_check');
  t.ok((await raw(s)).text.includes(SECRET.api), 'clear before');
  await s.stop();

  s = await startService({}, { dataDir: d, setup: false });
  await allSealed(t, s, 'after the boot step');
  t.match(
    s.logs().find((l) => l.msg === 'stored secrets sealed at rest'),
    { sealed: 4, resealed: 0 },
    'logged once, with the count',
  );
  const check = await s.service.core.db.all<{ sealed: string }>('SELECT sealed FROM secret_key_check');
  t.equal(check.length, 1, 'the key check is written');
  t.match(check[0]!.sealed, /^enc:v1:/);
  await works(t, s, c, sink, 'after the boot step');
  const sealed = await raw(s);
  await s.stop();

  s = await startService({}, { dataDir: d, setup: false });
  t.same(await raw(s), sealed, 'the next boot changes nothing');
  t.notOk(
    s.logs().some((l) => l.msg === 'stored secrets sealed at rest'),
    'and says nothing',
  );
});

t.test(
  'a wrong key refuses boot and changes nothing; a single value no key opens fails its record, readably',
  async (t) => {
    const sink = await startSink();
    const d = dir(t);
    let s = await startService({}, { dataDir: d });
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const c = await chain(s, sink);
    const before = await raw(s);
    await s.stop();

    await t.rejects(
      startService({ SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex') }, { dataDir: d, setup: false }),
      {
        message:
          /^SERVICE_SECRET_KEY is not the key this database's secrets were sealed with; .*SERVICE_SECRET_KEY_PREVIOUS/,
      },
      'boot refused, saying why',
    );

    s = await startService({}, { dataDir: d, setup: false });
    t.same(await raw(s), before, 'the refused boot changed nothing');
    // A damaged value (or one sealed under another key by hand): the rest of the service runs.
    await s.service.core.db.run('UPDATE targets SET config = ? WHERE id = ?', [
      JSON.stringify({
        url: sink.url,
        api_token: new SecretsAtRest(crypto.randomBytes(32).toString('hex')).seal(SECRET.api),
      }),
      c.target.id,
    ]);
    await s.stop();
    s = await startService({}, { dataDir: d, setup: false });
    t.match(
      s.logs().find((l) => /cannot decrypt/.test(l.msg ?? '')),
      { level: 'error', records: [`targets ${c.target.id}`] },
      'boot names the record',
    );
    const u = c.user.token;
    const test = await s.request('POST', `/api/targets/${c.target.id}/test`, { token: u });
    t.equal(test.body.ok, false);
    t.match(
      test.body.detail,
      /^a secret of this target cannot be decrypted with SERVICE_SECRET_KEY/,
      'the send fails with a readable reason',
    );
    const keep = await s.request('PATCH', `/api/targets/${c.target.id}`, {
      token: u,
      body: { config: { url: sink.url, api_token: '********' } },
    });
    t.equal(keep.status, 422, 'an unreadable secret counts as not stored: the API asks for it');
    await ok(
      s.request('PATCH', `/api/targets/${c.target.id}`, {
        token: u,
        body: { config: { url: sink.url, api_token: SECRET.api } },
      }),
      'entered again',
    );
    await works(t, s, c, sink, 'after entering the secret again');
  },
);

t.test(
  'rotation: with the old key as SERVICE_SECRET_KEY_PREVIOUS, boot seals everything again with the new one',
  async (t) => {
    const sink = await startSink();
    const d = dir(t);
    const [oldKey, newKey] = [crypto.randomBytes(32).toString('hex'), crypto.randomBytes(32).toString('hex')];
    let s = await startService({ SERVICE_SECRET_KEY: oldKey }, { dataDir: d });
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const c = await chain(s, sink);
    await s.stop();

    await t.rejects(
      startService({ SERVICE_SECRET_KEY: newKey }, { dataDir: d, setup: false }),
      { message: /is not the key/ },
      'the new key alone is refused',
    );
    s = await startService(
      { SERVICE_SECRET_KEY: newKey, SERVICE_SECRET_KEY_PREVIOUS: oldKey },
      { dataDir: d, setup: false },
    );
    t.match(
      s.logs().find((l) => /sealed again/.test(l.msg ?? '')),
      { sealed: 0, resealed: 4 },
      'every secret sealed again',
    );
    await allSealed(t, s, 'after the rotation', new SecretsAtRest(newKey));
    t.notMatch(s.logText(), new RegExp(oldKey), 'the previous key is masked in the logs like the key');
    await works(t, s, c, sink, 'during the rotation');
    await s.stop();

    s = await startService({ SERVICE_SECRET_KEY: newKey }, { dataDir: d, setup: false });
    await works(t, s, c, sink, 'with the new key alone');
    await s.stop();
    await t.rejects(
      startService({ SERVICE_SECRET_KEY: oldKey }, { dataDir: d, setup: false }),
      { message: /is not the key/ },
      'the old key is refused now',
    );
    s = await startService({ SERVICE_SECRET_KEY: newKey }, { dataDir: d, setup: false });
  },
);

t.test(
  'include backups carry sealed values; the same key restores them in a second data folder, another key only as ' +
    'the previous one',
  async (t) => {
    const sink = await startSink();
    const key = crypto.randomBytes(32).toString('hex');
    const src = await startService({ SERVICE_SECRET_KEY: key }, { dataDir: dir(t) });
    t.teardown(async () => {
      await src.stop();
      await sink.close();
    });
    const c = await chain(src, sink);
    const backup = await exportNow(src, 'include');
    const text = JSON.stringify(backup);
    for (const v of Object.values(SECRET)) t.notOk(text.includes(v), `${v.slice(0, 12)}… not in clear in the backup`);
    const inBackup = backup.configuration.targets.find((x: any) => x.id === c.target.id).config.api_token;
    t.equal(new SecretsAtRest(key).open(inBackup), SECRET.api, 'the key opens the backup');

    /** Stages `envelope` in a fresh service, restarts it to apply, and returns it running. */
    const restoreInto = async (env: Record<string, string>, envelope: unknown): Promise<TestService> => {
      const d = dir(t);
      const fresh = await startService(env, { dataDir: d });
      const staged = await upload(fresh.url, fresh.admin.token, JSON.stringify(envelope), 'conflict_mode=overwrite');
      t.equal(staged.status, 201, 'staged');
      await fresh.stop();
      const s = await startService(env, { dataDir: d, setup: false });
      t.teardown(() => s.stop());
      t.ok(
        s.logs().some((l) => l.msg === 'staged restore applied'),
        'applied at boot',
      );
      return s;
    };

    const same = await restoreInto({ SERVICE_SECRET_KEY: key }, backup);
    await allSealed(t, same, 'restored with the same key');
    t.not((await raw(same)).target, inBackup, 'sealed again by the restore');
    await works(t, same, c, sink, 'restored with the same key');

    const otherKey = crypto.randomBytes(32).toString('hex');
    const other = await startService({ SERVICE_SECRET_KEY: otherKey }, { dataDir: dir(t) });
    t.teardown(() => other.stop());
    const refused = await upload(other.url, other.admin.token, JSON.stringify(backup), 'conflict_mode=overwrite');
    t.equal(refused.status, 422, 'another key cannot read it');
    t.equal(refused.body.code, 'backup_secrets_unreadable');
    t.match(refused.body.detail, /sealed with another SERVICE_SECRET_KEY.*SERVICE_SECRET_KEY_PREVIOUS/);

    const rotated = await restoreInto({ SERVICE_SECRET_KEY: otherKey, SERVICE_SECRET_KEY_PREVIOUS: key }, backup);
    await allSealed(t, rotated, 'restored holding the key as the previous one', new SecretsAtRest(otherKey));

    // An older backup, or one written by hand, carries clear values: accepted, and sealed on the way in.
    const clear = structuredClone(backup);
    clear.configuration = JSON.parse(JSON.stringify(clear.configuration), (_k, v) =>
      typeof v === 'string' && v.startsWith('enc:v1:') ? new SecretsAtRest(key).open(v) : v,
    );
    clear.checksum = checksumOf(clear.configuration);
    t.ok(JSON.stringify(clear).includes(SECRET.api), 'the hand-made backup holds clear values');
    const fromClear = await restoreInto({}, clear);
    await allSealed(t, fromClear, 'restored from clear values');
  },
);

t.test('replicas booting together on one PostgreSQL database all boot, and leave every value sealed', async (t) => {
  const sink = await startSink();
  const url = await postgresDatabaseUrl();
  const key = crypto.randomBytes(32).toString('hex');
  const env = { SERVICE_DATABASE_URL: url, SERVICE_SECRET_KEY: key };
  const first = await startService(env, { dataDir: dir(t) });
  t.teardown(() => sink.close());
  const c = await chain(first, sink);
  const db = first.service.core.db;
  await db.run('UPDATE targets SET config = ? WHERE id = ?', [
    JSON.stringify({ url: sink.url, api_token: SECRET.api }),
    c.target.id,
  ]);
  await db.run('UPDATE bots SET token = ? WHERE id = ?', [SECRET.bot, c.botId]);
  await db.run('DELETE FROM secret_key_check');
  await first.stop();

  const replicas = await Promise.all([1, 2, 3].map(() => startService(env, { dataDir: dir(t), setup: false })));
  t.teardown(() => Promise.all(replicas.map((r) => r.stop())));
  // Each wrote compare-and-set on the value it read: whichever sealed a value first, the others left it.
  await allSealed(t, replicas[0]!, 'after three replicas booted together', new SecretsAtRest(key));
  t.equal(
    Number((await replicas[0]!.service.core.db.get('SELECT COUNT(*) AS n FROM secret_key_check'))!.n),
    1,
    'one key check',
  );
  await works(t, replicas[1]!, c, sink, 'on a replica');
  await works(t, replicas[2]!, c, sink, 'on another replica');
});
