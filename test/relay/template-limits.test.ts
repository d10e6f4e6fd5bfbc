/**
 * What one template may cost: blocks nest at most TEMPLATE_LIMITS.maxDepth deep (refused at save and
 * in a preview with 422 `template_too_deep`), and one render stops at maxSteps node visits or
 * maxOutput characters (a preview that reaches one is 422 `template_too_costly`; a delivery is cut
 * and ends with `…`). Both sides of each limit, the engine alone and through the API.
 */
import t from 'tap';
import { parseTemplate, render, renderChecked, TEMPLATE_LIMITS } from '../../core/src/relay/templates/engine.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';

const DEPTH = { name: 'TemplateDepthError' };
const nest = (levels: number, inner = '{{.}}') => '{{#each list}}'.repeat(levels) + inner + '{{/each}}'.repeat(levels);

t.test('blocks nest up to the depth limit, one level more is refused at parse', async (t) => {
  const max = TEMPLATE_LIMITS.maxDepth;
  t.doesNotThrow(() => parseTemplate(nest(max)), `${max} levels parse`);
  t.doesNotThrow(() => parseTemplate('{{#if a}}' + nest(max - 1) + '{{/if}}'), 'if and each count alike');
  t.throws(() => parseTemplate(nest(max + 1)), DEPTH, `${max + 1} levels do not`);
  t.throws(() => parseTemplate('{{#if a}}' + nest(max) + '{{/if}}'), DEPTH);
  t.throws(
    () => parseTemplate(nest(24)),
    { ...DEPTH, message: `blocks nest deeper than ${max} levels at {{#each}}` },
    "the probe's 24 levels",
  );
  // Siblings do not add up: depth is nesting, not the number of blocks.
  t.doesNotThrow(() => parseTemplate(Array.from({ length: 50 }, () => nest(max)).join('')));
});

t.test('one render visits at most maxSteps nodes: exactly the limit renders whole, one more is cut', async (t) => {
  const steps = TEMPLATE_LIMITS.maxSteps;
  // `{{#each list}}x{{/each}}` costs 1 (the block) + n (one text node per item), and lists stop at maxEachItems.
  const perBlock = 1 + TEMPLATE_LIMITS.maxEachItems;
  const list = Array.from({ length: TEMPLATE_LIMITS.maxEachItems }, (_, i) => i);
  const blocks = Math.floor(steps / perBlock);
  const rest = steps - blocks * perBlock;
  const exact = '{{#each list}}x{{/each}}'.repeat(blocks) + 'y'.repeat(0) + '{{a}}'.repeat(rest);
  const whole = renderChecked(exact, { list, a: 'z' }, 'text');
  t.equal(whole.exceeded, undefined, `${steps} steps render whole`);
  t.equal(whole.text, 'x'.repeat(blocks * TEMPLATE_LIMITS.maxEachItems) + 'z'.repeat(rest));
  const over = renderChecked(exact + '{{a}}', { list, a: 'z' }, 'text');
  t.equal(over.exceeded, 'steps', `${steps + 1} steps stop`);
  t.equal(over.text, whole.text + '…', 'what was rendered so far, ended with an ellipsis');
});

t.test('four nested loops over 200 items stop at the step limit instead of 1.6 billion steps', async (t) => {
  const list = Array.from({ length: 200 }, (_, i) => i);
  const out = renderChecked(nest(TEMPLATE_LIMITS.maxDepth), { list }, 'text');
  t.equal(out.exceeded, 'steps');
  t.ok(out.text.length < TEMPLATE_LIMITS.maxSteps * 4, 'the output is bounded by the steps taken');
  t.ok(out.text.endsWith('…'));
});

t.test(
  'one render writes at most maxOutput characters: exactly the limit renders whole, one more is cut',
  async (t) => {
    const max = TEMPLATE_LIMITS.maxOutput;
    const exact = renderChecked('{{v}}', { v: 'a'.repeat(max) }, 'text');
    t.equal(exact.exceeded, undefined);
    t.equal(exact.text.length, max);
    const over = renderChecked('{{v}}!', { v: 'a'.repeat(max) }, 'text');
    t.equal(over.exceeded, 'output');
    t.equal(over.text, 'a'.repeat(max) + '…');
    // Escaping counts: the escaped text is what is written.
    const escaped = renderChecked('{{v}}', { v: '*'.repeat(max / 2 + 1) }, 'markdown');
    t.equal(escaped.exceeded, 'output');
    t.equal(render('{{v}}', { v: 'b'.repeat(max + 10) }, 'text').length, max + 1, 'render() cuts the same way');
  },
);

const TOKEN = 'sharedtoken1';

async function withEvent(s: TestService, list: unknown[]) {
  const token = s.admin.token;
  const p = (
    await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Ex', config: { shared_token: TOKEN } },
    })
  ).body;
  const hook = `/api/hooks/${p.webhook_url.split('/api/hooks/')[1]}`;
  const r = await s.request('POST', hook, {
    headers: { 'x-example-token': TOKEN },
    body: { type: 'thing_happened', payload: { name: 'main', list } },
  });
  if (r.status !== 202) throw new Error(`webhook answered ${r.status} ${r.text}`);
}

t.test(
  'the API refuses a template nesting too deep at save and in a preview, and a preview past the render budget',
  async (t) => {
    const s = await startService();
    const sink = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const token = s.admin.token;
    await withEvent(
      s,
      Array.from({ length: 200 }, (_, i) => `item${i}`),
    );
    const max = TEMPLATE_LIMITS.maxDepth;

    const deep = await s.request('PUT', '/api/templates/thing_happened/en', {
      token,
      body: { title: 'T', body: nest(24, '{{name}}') },
    });
    t.equal(deep.status, 422, deep.text);
    t.equal(deep.body.code, 'template_too_deep');
    t.same(deep.body.params, { field: 'body', limit: 'max_depth', value: max });
    t.equal(
      deep.body.detail,
      `The body template nests {{#each}} and {{#if}} blocks more than ${max} levels deep; flatten it.`,
    );
    t.equal((await s.service.core.db.all('SELECT id FROM templates')).length, 0, 'nothing saved');

    const atLimit = await s.request('PUT', '/api/templates/thing_happened/en', {
      token,
      body: { title: 'T', body: nest(max) },
    });
    t.equal(atLimit.status, 200, `${max} levels are saved`);

    const previewDeep = await s.request('POST', '/api/templates/thing_happened/preview', {
      token,
      body: { locale: 'en', title: nest(max + 1), body: '' },
    });
    t.equal(previewDeep.status, 422);
    t.match(previewDeep.body, { code: 'template_too_deep', params: { field: 'title' } });

    const costly = await s.request('POST', '/api/templates/thing_happened/preview', {
      token,
      body: { locale: 'en', title: 'T', body: nest(3) },
    });
    t.equal(costly.status, 422, costly.text);
    t.equal(costly.body.code, 'template_too_costly');
    t.same(costly.body.params, { limit: 'max_steps', value: TEMPLATE_LIMITS.maxSteps });
    t.match(costly.body.detail, /more than 10000 steps/);

    const cheap = await s.request('POST', '/api/templates/thing_happened/preview', {
      token,
      body: { locale: 'en', title: 'T', body: '{{#each list}}{{.}} {{/each}}' },
    });
    t.equal(cheap.status, 200, 'one loop over 200 items is within the budget');
    t.match(cheap.body.body, /^item0 item1 .* item199 $/);

    // The saved four-level template still costs a bounded render in the event log.
    const events = await s.request('GET', '/api/events', { token });
    t.equal(events.status, 200);
    const health = await s.request('GET', '/api/health');
    t.equal(health.status, 200);
  },
);

t.test(
  'a stored own template deeper than the limit (saved before it) gives way to the default at delivery',
  async (t) => {
    const s = await startService();
    const sink = await startSink();
    t.teardown(async () => {
      await s.stop();
      await sink.close();
    });
    const token = s.admin.token;
    const p = (
      await s.request('POST', '/api/providers', {
        token,
        body: { kind: 'example', name: 'Ex', config: { shared_token: TOKEN } },
      })
    ).body;
    const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: p.id, name: 'CI' } })).body;
    const tg = (
      await s.request('POST', '/api/targets', {
        token,
        body: { kind: 'recorder', name: 'Sink', config: { url: sink.url }, locale: 'en' },
      })
    ).body;
    await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token });
    const now = new Date().toISOString();
    await s.service.core.db.run(
      'INSERT INTO templates (id, user_id, event_type, locale, title, body, created_at, updated_at) VALUES (?, ?, ' +
        '?, ?, ?, ?, ?, ?)',
      ['tpl-old-deep', s.admin.id, 'thing_happened', 'en', 'Deep {{name}}', nest(24), now, now],
    );
    const hook = `/api/hooks/${p.webhook_url.split('/api/hooks/')[1]}`;
    const r = await s.request('POST', hook, {
      headers: { 'x-example-token': TOKEN },
      body: { type: 'thing_happened', payload: { name: 'main', list: [1, 2, 3] } },
    });
    t.equal(r.status, 202);
    await sink.waitFor(1);
    t.equal(sink.received[0].body.title, 'Thing: main', 'the default title, not the stored deep one');
  },
);
