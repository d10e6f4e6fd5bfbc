/**
 * The scheduled action kind `ai_digest` against the fake model: one summary per target language,
 * sent to each target through the pipeline and recorded as an `ai_digest` event with its token
 * usage, counted against the owner's daily token quota; the plain digest, saying why, when the
 * model fails or the quota is spent; no model call without events; the action's config checked
 * for ownership like the other kinds.
 */
import t from 'tap';
import { runDueActions } from '../../core/src/relay/actions/runner.ts';
import type { Relay } from '../../core/src/relay/pipeline/relay.ts';
import { TEST_PLUGINS } from '../helpers/service.ts';
import { lab } from './lab-support.ts';
import { harness } from './support.ts';

const env = { SERVICE_PLUGINS: TEST_PLUGINS };
const russian = (body: any) => /по-русски/.test(body.messages[0].content);

t.test(
  'ai_digest: a summary per target language through the pipeline, with its tokens; the plain digest when the ' +
    'model fails or the quota is spent',
  async (t) => {
    const { svc, ai } = await harness(t, env);
    const u = await svc.user();
    const v = await svc.user();
    const mine = await lab(t, svc, u.token, { targets: { Phone: 'en', Дача: 'ru' } });
    const theirs = await lab(t, svc, v.token);
    const phone = mine.targets.Phone!;
    const dacha = mine.targets.Дача!;
    const created = await svc.request('POST', '/api/actions', {
      token: u.token,
      body: {
        name: 'Morning',
        kind: 'ai_digest',
        schedule: '0 7 * * *',
        timezone: 'Europe/Berlin',
        config: { target_ids: [phone.id, dacha.id] },
      },
    });
    t.equal(created.status, 201, created.text);
    t.match(created.body, { kind: 'ai_digest', config: { target_ids: [phone.id, dacha.id] }, next_run_at: /Z$/ });
    const id = created.body.id;
    const run = async () => {
      const r = await svc.request('POST', `/api/actions/${id}/run`, { token: u.token });
      t.equal(r.body.last_status, 'ok', r.body.last_error ?? 'ran');
    };
    const digests = async () =>
      (await svc.request('GET', '/api/events', { token: u.token, headers: {} })).body.events.filter(
        (e: any) => e.event_type === 'ai_digest',
      );

    await mine.emit('alarm', 'disk sda failing');
    await mine.emit('thing_happened', 'nightly backup');
    await theirs.emit('alarm', 'their secret disk');
    await phone.sink.waitFor(2);
    ai.setScript((body) => ({
      text: russian(body) ? 'Сводка: один критичный сбой диска.' : 'Summary: one critical disk alarm.',
      usage: { prompt_tokens: 100, completion_tokens: 20 },
    }));

    await run();
    t.equal(ai.calls.length, 2, 'one model call per language');
    const asked = ai.calls.map((c) => c.body.messages[1].content).sort();
    t.match(asked[0], /ALARM disk sda failing/, 'the English list');
    t.match(asked[1], /ТРЕВОГА disk sda failing/, 'the Russian list');
    t.notMatch(JSON.stringify(ai.calls.map((c) => c.body)), /their secret disk/, "only the owner's events");
    t.equal(ai.calls[0]!.body.tools, undefined, 'no tools for the digest');
    const en = (await phone.sink.waitFor(3))[2]!.body;
    t.match(en, {
      title: 'AI digest: Morning (2 events)',
      body: 'Summary: one critical disk alarm.',
      locale: 'en',
      severity: 'critical',
    });
    const ru = (await dacha.sink.waitFor(1))[0]!.body;
    t.match(ru, { title: 'ИИ-сводка: Morning (2 события)', body: 'Сводка: один критичный сбой диска.', locale: 'ru' });
    const [recorded] = await digests();
    t.match(recorded, {
      provider_kind: 'action',
      severity: 'critical',
      dispatch_status: /pending|dispatched/,
      payload: { total: 2, usage: { prompt: 200, completion: 40, total: 240, model: 'gpt-4o-mini' } },
    });
    t.equal(
      (await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body.tokens_used,
      240,
      "counted against the owner's token quota",
    );

    // The model fails: the plain digest, saying why, in each language.
    await mine.emit('alarm', 'PSU fan stopped');
    await phone.sink.waitFor(4);
    ai.setScript(() => ({ failStatus: 500 }));
    await run();
    t.equal(ai.calls.length, 4);
    const plain = (await phone.sink.waitFor(5))[4]!.body;
    t.match(plain.title, 'AI digest: Morning (1 event)');
    t.match(
      plain.body,
      new RegExp(
        /^The AI summary failed \(the model endpoint failed\)\. Here is the plain digest\.\n\nSince .*:\n• /.source +
          /.* — ALARM PSU fan stopped\n$/.source,
      ),
    );
    const plainRu = (await dacha.sink.waitFor(2))[1]!.body;
    t.match(
      plainRu.body,
      new RegExp(
        /^ИИ-сводка не удалась \(сервер модели вернул ошибку\)\. Ниже — обычная сводка\.\n\nС .*:\n• .* — /.source +
          /ТРЕВОГА PSU fan stopped\n$/.source,
      ),
    );
    t.match((await digests())[0].payload, { fallback: { en: 'model', ru: 'model' }, usage: { total: 0 } });

    // The quota is spent: no model call, the plain digest says so.
    t.equal(
      (
        await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
          token: svc.admin.token,
          body: { max_ai_tokens_per_day: 240 },
        })
      ).status,
      200,
    );
    await mine.emit('thing_happened', 'door opened');
    await phone.sink.waitFor(6);
    ai.setScript(() => ({ text: 'should not be asked' }));
    await run();
    t.equal(ai.calls.length, 4, 'the model was not called');
    t.match(
      (await phone.sink.waitFor(7))[6]!.body.body,
      new RegExp(
        /^The AI summary was skipped: today's AI token quota of this account is spent\. Here is the plain /.source +
          /digest\.\n\nSince .*:\n• .* — Thing: door opened\n$/.source,
      ),
    );
    t.match((await dacha.sink.waitFor(3))[2]!.body.body, /^ИИ-сводка пропущена: дневная квота токенов ИИ/);
    t.equal(
      (await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body.tokens_used,
      240,
      'nothing more was counted',
    );

    // Nothing happened since: no model call, the digest says so.
    await svc.request('PATCH', `/api/v1/admin/users/${u.id}`, {
      token: svc.admin.token,
      body: { max_ai_tokens_per_day: 100000 },
    });
    await run();
    t.equal(ai.calls.length, 4);
    t.match((await phone.sink.waitFor(8))[7]!.body, {
      title: 'AI digest: Morning (0 events)',
      body: /^No events since /,
    });

    // On its schedule: the scheduler runs it once its time came.
    await mine.emit('alarm', 'UPS on battery');
    await phone.sink.waitFor(9);
    ai.setScript((body) => ({ text: russian(body) ? 'Сводка по расписанию.' : 'Scheduled summary.' }));
    const next = (await svc.request('GET', `/api/actions/${id}`, { token: u.token })).body.next_run_at;
    svc.clock.set(new Date(Date.parse(next) + 1000));
    await runDueActions(svc.service.core, svc.service.core.services.get('relay') as Relay);
    // Its deliveries are due at the moved clock: sent before it goes back.
    for (let i = 0; i < 100 && phone.sink.received.length < 10; i++) {
      await mine.relay.tick();
      await phone.sink.waitFor(10, 50);
    }
    svc.clock.real();
    t.equal(ai.calls.length, 6);
    t.match(phone.sink.received[9]?.body, { body: 'Scheduled summary.' });
    const after = (await svc.request('GET', `/api/actions/${id}`, { token: u.token })).body;
    t.equal(after.last_status, 'ok');
    t.ok(Date.parse(after.next_run_at) > Date.parse(next), 'the next run moved on');
  },
);

t.test("ai_digest config: only the owner's targets and providers", async (t) => {
  const { svc } = await harness(t, env);
  const u = await svc.user();
  const v = await svc.user();
  const mine = await lab(t, svc, u.token);
  const theirs = await lab(t, svc, v.token);
  const make = (config: Record<string, unknown>) =>
    svc.request('POST', '/api/actions', {
      token: u.token,
      body: { name: 'D', kind: 'ai_digest', schedule: '0 7 * * *', config },
    });
  t.equal((await make({ target_ids: [theirs.targets.Sink!.id] })).body.code, 'unknown_target');
  t.equal(
    (await make({ target_ids: [mine.targets.Sink!.id], provider_ids: [theirs.provider.id] })).body.code,
    'unknown_provider',
  );
  t.equal((await make({ target_ids: [] })).status, 422);
  t.equal(
    (await make({ target_ids: [mine.targets.Sink!.id], tracker_id: mine.tracker.id })).status,
    422,
    'fields of another kind are refused',
  );
  const ok = await make({ target_ids: [mine.targets.Sink!.id], provider_ids: [mine.provider.id] });
  t.equal(ok.status, 201);
  t.match(ok.body.config, { provider_ids: [mine.provider.id] });
});
