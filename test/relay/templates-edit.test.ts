/**
 * Own templates through the API: saved per event type and locale, read back, used by the next real
 * delivery in that target's locale only, reset to the default, isolated per user, validated (type,
 * locale, empty, limits, parse errors with their params), and previewed as an unsaved draft.
 */
import t from 'tap';
import { startService, startSink, type TestService } from '../helpers/service.ts';

const TOKEN = 'sharedtoken1';

async function chain(s: TestService, token: string, sinkUrl: string) {
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Ex', config: { shared_token: TOKEN } },
    })
  ).body;
  const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'CI' } })).body;
  const en = (
    await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'English sink', config: { url: sinkUrl }, locale: 'en' },
    })
  ).body;
  const ru = (
    await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'Russian sink', config: { url: sinkUrl }, locale: 'ru' },
    })
  ).body;
  for (const tg of [en, ru]) await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token });
  const hook = `/api/hooks/${p.webhook_url.split('/api/hooks/')[1]}`;
  return {
    async fire(type: string, payload: Record<string, unknown>) {
      const r = await s.request('POST', hook, { headers: { 'x-example-token': TOKEN }, body: { type, payload } });
      if (r.status !== 202) throw new Error(`webhook answered ${r.status} ${r.text}`);
    },
  };
}

t.test('an own template is saved, read back, used by the next delivery in its locale only, and reset', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const c = await chain(s, token, sink.url);

  const put = await s.request('PUT', '/api/templates/thing_happened/en', {
    token,
    body: {
      title: 'CI failed on {{name}}',
      body: '{{#if url}}See {{url}}{{else}}no link{{/if}} ({{provider_name}} → {{target_name}})',
    },
  });
  t.equal(put.status, 200, put.text);
  t.match(put.body, { event_type: 'thing_happened', locale: 'en', title: 'CI failed on {{name}}' });
  t.ok(Date.parse(put.body.updated_at), 'with when it was saved');

  const list = (await s.request('GET', '/api/templates', { token })).body.templates;
  const entry = list.find((x: any) => x.event_type === 'thing_happened');
  t.same(entry.locales.en.override, { title: 'CI failed on {{name}}', body: put.body.body }, 'read back in the list');
  t.equal(entry.locales.ru.override, null, 'the other locale has none');
  t.equal(entry.locales.en.default.title, 'Thing: {{name}}', 'the default is still listed beside it');

  await c.fire('thing_happened', { name: 'main' });
  await sink.waitFor(2);
  const titles = () => Object.fromEntries(sink.received.map((r) => [r.body.locale, r.body.title]));
  t.same(
    titles(),
    { en: 'CI failed on main', ru: 'Событие: main' },
    'the English target gets the own template, the Russian one the default',
  );
  const en = sink.received.find((r) => r.body.locale === 'en');
  t.match(en.body.body, /no link \(Ex → English sink\)/, 'the body with its names');

  // Replacing it (an upsert, not a second row).
  const again = await s.request('PUT', '/api/templates/thing_happened/en', {
    token,
    body: { title: 'Build broke: {{name}}', body: '' },
  });
  t.equal(again.status, 200);
  t.equal(again.body.title, 'Build broke: {{name}}');
  const rows = await s.service.core.db.all('SELECT title FROM templates WHERE user_id = ? AND event_type = ?', [
    s.admin.id,
    'thing_happened',
  ]);
  t.same(
    rows.map((r) => r.title),
    ['Build broke: {{name}}'],
    'one row per user, type and locale',
  );

  // A Russian one too, then reset the English one.
  t.equal(
    (
      await s.request('PUT', '/api/templates/thing_happened/ru', {
        token,
        body: { title: 'Сборка сломалась: {{name}}', body: 'подробности' },
      })
    ).status,
    200,
  );
  const del = await s.request('DELETE', '/api/templates/thing_happened/en', { token });
  t.equal(del.status, 204);
  t.equal(
    (await s.request('DELETE', '/api/templates/thing_happened/en', { token })).status,
    204,
    'deleting again is still 204',
  );
  const after = (await s.request('GET', '/api/templates', { token })).body.templates.find(
    (x: any) => x.event_type === 'thing_happened',
  );
  t.equal(after.locales.en.override, null, 'English back to the default');
  t.equal(after.locales.ru.override?.title, 'Сборка сломалась: {{name}}', 'Russian kept');

  sink.received.length = 0;
  await c.fire('thing_happened', { name: 'dev' });
  await sink.waitFor(2);
  t.same(
    titles(),
    { en: 'Thing: dev', ru: 'Сборка сломалась: dev' },
    'the next delivery: default in English, own in Russian',
  );

  // The saved-template preview follows too.
  const pv = await s.request('GET', '/api/templates/thing_happened/preview?locale=ru', { token });
  t.match(pv.body, { title: 'Сборка сломалась: dev', body: 'подробности', own_template: true });
});

t.test('another user never reads, changes or deletes my templates', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const a = s.admin.token;
  const b = (await s.user()).token;
  t.equal(
    (await s.request('PUT', '/api/templates/alarm/en', { token: a, body: { title: 'Mine {{name}}', body: 'a' } }))
      .status,
    200,
  );

  const other = (tok: string) =>
    s
      .request('GET', '/api/templates', { token: tok })
      .then((r) => r.body.templates.find((x: any) => x.event_type === 'alarm').locales.en.override);
  t.equal(await other(b), null, "B does not see A's template");
  t.equal(
    (await s.request('PUT', '/api/templates/alarm/en', { token: b, body: { title: 'Theirs {{name}}', body: 'b' } }))
      .status,
    200,
  );
  t.equal((await other(a)).title, 'Mine {{name}}', "B saving the same type and locale leaves A's alone");
  t.equal((await other(b)).title, 'Theirs {{name}}', 'B sees only theirs');
  t.equal((await s.request('DELETE', '/api/templates/alarm/en', { token: b })).status, 204);
  t.equal((await other(a)).title, 'Mine {{name}}', "B deleting theirs leaves A's");
  t.equal(await other(b), null);
  t.equal(
    (await s.request('DELETE', '/api/templates/alarm/en', { token: b })).status,
    204,
    'B deleting again touches nothing',
  );
  t.equal((await other(a)).title, 'Mine {{name}}');
  t.equal(
    (await s.request('PUT', '/api/templates/alarm/en', { body: { title: 'x', body: '' } })).status,
    401,
    'signed out',
  );
  t.equal((await s.request('DELETE', '/api/templates/alarm/en')).status, 401);
});

t.test('validation: unknown type, locale, empty, limits, parse errors', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const put = (path: string, body: unknown) => s.request('PUT', path, { token, body });

  const unknown = await put('/api/templates/no_such_type/en', { title: 'x', body: 'y' });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'unknown_event_type');
  t.equal(unknown.body.params.event_type, 'no_such_type');

  for (const l of ['de', 'EN', 'en-US']) {
    const r = await put(`/api/templates/alarm/${l}`, { title: 'x', body: 'y' });
    t.equal(r.status, 422, `locale ${l} refused`);
    t.match(r.body, { code: 'unsupported_locale', params: { locale: l } });
  }
  t.equal((await s.request('DELETE', '/api/templates/alarm/de', { token })).status, 422, 'deleting in a bad locale');
  const empty = await put('/api/templates/alarm/en', { title: '  ', body: '' });
  t.equal(empty.status, 422);
  t.equal(empty.body.code, 'template_empty');
  t.equal(
    (await put('/api/templates/alarm/en', { title: '', body: 'only a body' })).status,
    200,
    'a body alone is enough',
  );
  t.equal(
    (await put('/api/templates/alarm/en', { title: 'x'.repeat(500), body: 'y'.repeat(10_000) })).status,
    200,
    'at the limits',
  );
  const longTitle = await put('/api/templates/alarm/en', { title: 'x'.repeat(501), body: '' });
  t.equal(longTitle.status, 422, 'a title over 500 characters');
  t.match(longTitle.body.errors, [{ path: 'body/title', code: 'maxLength' }]);
  t.equal(
    (await put('/api/templates/alarm/en', { title: 'x', body: 'y'.repeat(10_001) })).status,
    422,
    'a body over 10,000 characters',
  );
  t.equal((await put('/api/templates/alarm/en', { title: 'x' })).status, 422, 'the body is required');
  t.equal((await put('/api/templates/alarm/en', { title: 'x', body: 'y', extra: 1 })).status, 422, 'no unknown fields');

  const bad = await put('/api/templates/alarm/en', { title: 'ok {{name}}', body: '{{#each items}}x{{/if}}' });
  t.equal(bad.status, 422);
  t.equal(bad.body.code, 'template_invalid');
  t.match(bad.body.params, {
    field: 'body',
    message: 'unexpected {{/if}}',
    reason: 'unexpected_close',
    tag: '{{/if}}',
  });
  t.equal(bad.body.detail, 'The body template does not parse: unexpected {{/if}}');
  const badTitle = await put('/api/templates/alarm/ru', { title: '{{#if x}}open', body: '{{else}}' });
  t.match(badTitle.body.params, { field: 'title', reason: 'unclosed', tag: '{{#if}}' }, 'the title is checked first');
  const row = await s.service.core.db.get(
    'SELECT title, body FROM templates WHERE user_id = ? AND event_type = ? AND locale = ?',
    [s.admin.id, 'alarm', 'en'],
  );
  t.same(
    { title: row!.title, body: row!.body },
    { title: 'x'.repeat(500), body: 'y'.repeat(10_000) },
    'refused saves changed nothing',
  );
  t.equal(Number((await s.service.core.db.get('SELECT COUNT(*) AS n FROM templates WHERE locale = ?', ['ru']))!.n), 0);
});

t.test('a draft is previewed with the newest own event without being saved', async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const other = await s.user();
  const c = await chain(s, token, sink.url);
  const preview = (body: unknown, tok = token, type = 'alarm') =>
    s.request('POST', `/api/templates/${type}/preview`, { token: tok, body });

  const none = await preview({ locale: 'en', title: 'x', body: '' });
  t.equal(none.status, 404);
  t.equal(none.body.code, 'no_event_for_preview');

  await c.fire('alarm', { name: 'smoke' });
  await c.fire('alarm', { name: 'fire' });
  await sink.waitFor(4);
  const draft = await preview({
    locale: 'ru',
    title: 'Горит: {{name}}',
    body: '{{provider_name}} / {{tracker_name}} / {{target_name}}',
  });
  t.equal(draft.status, 200, draft.text);
  t.match(draft.body, {
    event_type: 'alarm',
    locale: 'ru',
    title: 'Горит: fire',
    draft: true,
    own_template: false,
    provider_name: 'Ex',
  });
  t.match(draft.body.body, /^Ex \/ CI \/ (English|Russian) sink$/, 'the same names as the saved preview');
  const saved = (await s.request('GET', '/api/templates/alarm/preview?locale=ru', { token })).body;
  t.equal(saved.event_id, draft.body.event_id, 'the same event as the GET preview');
  t.equal(saved.title, 'ТРЕВОГА fire', 'nothing was saved: the GET preview still shows the default');
  t.equal(Number((await s.service.core.db.get('SELECT COUNT(*) AS n FROM templates'))!.n), 0, 'no row written');

  const bad = await preview({ locale: 'en', title: '{{#each x}}', body: '' });
  t.equal(bad.status, 422);
  t.match(bad.body, { code: 'template_invalid', params: { field: 'title', reason: 'unclosed' } });
  t.equal((await preview({ locale: 'de', title: 'x', body: '' })).status, 422, 'a bad locale');
  t.equal((await preview({ locale: 'en', title: 'x'.repeat(501), body: '' })).status, 422, 'the same limits');
  const theirs = await preview({ locale: 'en', title: 'x', body: '' }, other.token);
  t.equal(theirs.status, 404, 'another user has no event of mine to preview with');
  t.equal(theirs.body.code, 'no_event_for_preview');
});
