import crypto from 'node:crypto';
import http from 'node:http';
import example from 'herald-plugin-example';
import t from 'tap';
import { defineProvider, defineTarget, NotReadyError, Secret, Type } from '../../core/src/plugin-api/index.ts';
import { createTestHost } from '../../core/src/plugin-api/testing.ts';
import { loadPlugins, PluginLoadError, wrapDefinition } from '../../core/src/plugins/loader.ts';
import { startService, startSink } from '../helpers/service.ts';

t.test('the loader names the package and says what to do', async (t) => {
  await t.rejects(loadPlugins(['herald-plugin-that-does-not-exist']), {
    constructor: PluginLoadError,
    message: /"herald-plugin-that-does-not-exist" is not installed/,
  });
  const bad = defineProvider({ manifest: { ...example.manifest, apiVersion: 2 as 1 }, create: example.create });
  t.throws(
    () => wrapDefinition('herald-plugin-future', bad),
    /speaks plugin API version 2, but this Herald speaks version 1/,
  );
  const [p] = await loadPlugins(['herald-plugin-example']);
  t.equal(p!.id, 'example');
  t.same(p!.secretPaths, ['shared_token'], 'Secret fields found by one walk of the schema');
  const v = p!.validateConfig({ shared_token: 'abcdefgh' });
  t.same(v.ok && v.value, { shared_token: 'abcdefgh', label: 'example' }, 'defaults applied');
  t.equal(p!.validateConfig({ shared_token: 'x' }).ok, false);
});

t.test('the test host runs a third-party plugin', async (t) => {
  const host = createTestHost();
  const h = await host.provider(example, { shared_token: 'abcdefgh' });
  const res = await h.instance.handleWebhook!({
    method: 'POST',
    headers: { 'x-example-token': 'abcdefgh' },
    rawBody: Buffer.from(''),
    body: { type: 'alarm', payload: { name: 'x' } },
    query: {},
    ip: '127.0.0.1',
  });
  t.equal(res.events[0]!.type, 'alarm');
  await t.rejects(
    h.instance.handleWebhook!({
      method: 'POST',
      headers: {},
      rawBody: Buffer.from(''),
      body: {},
      query: {},
      ip: '127.0.0.1',
    }),
    { code: 'WEBHOOK_REJECTED', status: 401 },
  );
});

t.test('a failing instance is isolated and retried in the background; others keep running', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  // poll_url pointing nowhere: polls fail, counted per tracker; the webhook side of another provider still works
  const broken = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: {
      kind: 'example',
      name: 'Broken',
      config: { shared_token: 'sharedtoken1', poll_url: 'http://127.0.0.1:9/' },
    },
  });
  const good = await s.request('POST', '/api/providers', {
    token: s.admin.token,
    body: { kind: 'example', name: 'Good', config: { shared_token: 'sharedtoken2' } },
  });
  t.equal(broken.status, 201);
  const hook = good.body.webhook_url.replace(/^https?:\/\/[^/]+/, '');
  const r = await s.request('POST', hook, {
    headers: { 'x-example-token': 'sharedtoken2' },
    body: { type: 'alarm', payload: { name: 'ok' } },
  });
  t.equal(r.status, 202, 'the healthy instance keeps working');
});

t.test(
  'NotReadyError is retried in the background; a throwing instance is isolated; stop runs in reverse order',
  async (t) => {
    const s = await startService();
    t.teardown(() => s.stop());
    const core = s.service.core;
    let attempts = 0;
    const stopped: string[] = [];
    const flaky = defineProvider({
      manifest: {
        id: 'flaky',
        kind: 'provider',
        apiVersion: 1,
        displayName: 'Flaky',
        ingest: 'webhook',
        configSchema: Type.Object({ name: Type.String() }),
        events: {},
      },
      create: (ctx) => ({
        async start() {
          if (ctx.config.name === 'flaky' && ++attempts < 3) throw new NotReadyError('not yet');
          if (ctx.config.name === 'broken') throw new Error('boom');
        },
        async stop() {
          stopped.push(ctx.config.name);
        },
      }),
    });
    core.plugins.add(wrapDefinition('flaky-plugin', flaky));
    const now = new Date().toISOString();
    const mk = async (name: string) => {
      const id = crypto.randomUUID();
      await core.db.run(
        'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
          `VALUES (?, ?, 'flaky', ?, ?, ?, ?, ?, ?)`,
        [id, s.admin.id, name, { name }, true, crypto.randomUUID(), now, now],
      );
      const { providerRowFrom } = await import('../../core/src/plugins/host.ts');
      await core.plugins.startProvider(
        providerRowFrom((await core.db.get('SELECT * FROM providers WHERE id = ?', [id]))!),
      );
      return id;
    };
    const a = await mk('first');
    const f = await mk('flaky');
    const b = await mk('broken');
    t.equal(core.plugins.runningProvider(a)?.state, 'running');
    t.equal(core.plugins.runningProvider(f)?.state, 'retrying', 'not ready: retrying');
    t.equal(core.plugins.runningProvider(b)?.state, 'retrying', 'unexpected error: isolated and retried');
    const end = Date.now() + 15_000;
    while (core.plugins.runningProvider(f)?.state !== 'running' && Date.now() < end)
      await new Promise((r) => setTimeout(r, 100));
    t.equal(core.plugins.runningProvider(f)?.state, 'running', 'started after retries');
    t.equal(attempts, 3);
    t.equal((await core.db.get('SELECT status FROM providers WHERE id = ?', [f]))!.status, 'running');
    await core.plugins.stopAll();
    t.same(
      stopped.filter((x) => x !== 'broken'),
      ['flaky', 'first'],
      'stopped in reverse start order',
    );
  },
);

t.test('polls of one instance never overlap: "poll now" during a scheduled poll runs after it', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const core = s.service.core;
  let active = 0;
  let most = 0;
  const started: number[] = [];
  const poller = defineProvider({
    manifest: {
      id: 'slow_poller',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'Slow poller',
      ingest: 'poll',
      pollIntervalSeconds: 3600,
      configSchema: Type.Object({}),
      events: {},
    },
    create: () => ({
      async poll() {
        started.push(Date.now());
        active++;
        most = Math.max(most, active);
        await new Promise((r) => setTimeout(r, 60));
        active--;
      },
    }),
  });
  core.plugins.add(wrapDefinition('slow-poller-plugin', poller));
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await core.db.run(
    'INSERT INTO providers (id, user_id, kind, name, config, enabled, webhook_token, created_at, updated_at) ' +
      `VALUES (?, ?, 'slow_poller', 'P', ?, ?, ?, ?, ?)`,
    [id, s.admin.id, {}, true, crypto.randomUUID(), now, now],
  );
  await core.db.run(
    'INSERT INTO trackers (id, user_id, provider_id, name, enabled, config, created_at, updated_at) VALUES (?, ?, ' +
      `?, 'T', ?, ?, ?, ?)`,
    [crypto.randomUUID(), s.admin.id, id, true, {}, now, now],
  );
  const { providerRowFrom } = await import('../../core/src/plugins/host.ts');
  await core.plugins.startProvider(providerRowFrom((await core.db.get('SELECT * FROM providers WHERE id = ?', [id]))!));
  // The start schedules a first poll at once; three more are asked for while it may still run.
  await Promise.all([core.plugins.pollOnce(id), core.plugins.pollOnce(id), core.plugins.pollOnce(id)]);
  t.equal(most, 1, 'never two polls of the instance at once');
  t.ok(started.length >= 3, `every poll asked for ran (${started.length})`);
  for (let i = 1; i < started.length; i++) t.ok(started[i]! - started[i - 1]! >= 50, 'each after the one before ended');
});

t.test(
  'each instance gets an outbound client that keeps its declared and secret-carrying headers on their origin',
  async (t) => {
    const s = await startService();
    t.teardown(() => s.stop());
    const core = s.service.core;
    // The second origin records what reaches it; the first answers every request with 302 there.
    const reached: http.IncomingHttpHeaders[] = [];
    const second = http.createServer((req, res) => {
      reached.push(req.headers);
      res.end('ok');
    });
    const first = http.createServer((req, res) =>
      res
        .writeHead(302, { location: `http://127.0.0.1:${(second.address() as { port: number }).port}${req.url}` })
        .end(),
    );
    for (const srv of [second, first]) await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    t.teardown(() => {
      for (const srv of [first, second]) {
        srv.closeAllConnections();
        srv.close();
      }
    });
    const base = `http://127.0.0.1:${(first.address() as { port: number }).port}`;
    const KEY = 'acme-secret-key-0123456789';
    const headers = (key: string) => ({
      'x-acme-key': 'declared-not-secret',
      'x-acme-signature': `v1 ${key}`,
      'x-trace': 'kept',
    });
    const configSchema = Type.Object({ base: Type.String(), key: Secret() });

    const provider = defineProvider({
      manifest: {
        id: 'acme_creds',
        kind: 'provider',
        apiVersion: 1,
        displayName: 'Acme',
        ingest: 'webhook',
        credentialHeaders: ['X-Acme-Key'],
        configSchema,
        events: {},
      },
      create: (ctx) => ({
        async start() {
          await ctx.http.request(`${ctx.config.base}/p`, { headers: headers(ctx.config.key) });
        },
      }),
    });
    const target = defineTarget({
      manifest: {
        id: 'acme_creds_target',
        kind: 'target',
        apiVersion: 1,
        displayName: 'Acme',
        credentialHeaders: ['x-acme-key'],
        configSchema,
        limits: { maxMessageLength: 100, formats: ['text'] },
      },
      create: (ctx) => ({
        async send() {
          await ctx.http.fetch(`${ctx.config.base}/t`, { headers: headers(ctx.config.key) });
        },
      }),
    });
    core.plugins.add(wrapDefinition('acme-creds', provider));
    core.plugins.add(wrapDefinition('acme-creds-target', target));
    const now = new Date().toISOString();
    await core.plugins.startProvider({
      id: crypto.randomUUID(),
      user_id: s.admin.id,
      kind: 'acme_creds',
      name: 'A',
      config: { base, key: KEY },
      enabled: true,
      webhook_token: crypto.randomUUID(),
      updated_at: now,
    });
    const inst = await core.plugins.targetInstance({
      id: crypto.randomUUID(),
      user_id: s.admin.id,
      kind: 'acme_creds_target',
      name: 'T',
      config: { base, key: KEY },
      locale: 'en',
      enabled: true,
      updated_at: now,
    });
    await inst.send({} as never, { signal: AbortSignal.timeout(5000), attempt: 1 });

    t.equal(reached.length, 2, "the provider's request and the target's fetch both followed the redirect");
    for (const h of reached) {
      t.equal(h['x-acme-key'], undefined, 'the header the manifest declares is dropped');
      t.equal(h['x-acme-signature'], undefined, 'a header carrying a Secret() value is dropped');
      t.equal(h['x-trace'], 'kept', 'other headers go along');
    }
    t.throws(
      () =>
        wrapDefinition(
          'bad-headers',
          defineProvider({
            manifest: { ...provider.manifest, credentialHeaders: ['x api key'] },
            create: provider.create,
          }),
        ),
      /credentialHeaders that are not a list of header names/,
    );
  },
);
