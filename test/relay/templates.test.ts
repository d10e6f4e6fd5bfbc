import t from 'tap';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { loadPlugins } from '../../core/src/plugins/loader.ts';
import { renderMessage } from '../../core/src/relay/pipeline/render.ts';
import { TemplateCatalog } from '../../core/src/relay/templates/catalog.ts';
import { parseTemplate, render, TemplateError } from '../../core/src/relay/templates/engine.ts';

t.test('every event type of every first-party plugin has English and Russian templates that parse', async (t) => {
  const plugins = await loadPlugins([...FIRST_PARTY_PLUGINS]);
  const catalog = new TemplateCatalog(plugins);
  let n = 0;
  for (const p of plugins) {
    for (const type of Object.keys(p.def.manifest.events ?? {})) {
      for (const locale of ['en', 'ru'] as const) {
        t.ok(catalog.has(type, locale), `${p.id}/${type} has a ${locale} template`);
        const tpl = catalog.get(type, locale);
        t.doesNotThrow(() => {
          parseTemplate(tpl.title);
          parseTemplate(tpl.body);
        }, `${p.id}/${type}/${locale} parses`);
        n++;
      }
    }
  }
  t.ok(n >= 60, `${n} templates checked`);
  for (const type of ['bridge_self_poll_failures', 'bridge_self_deferred_backlog', 'bridge_self_target_failures']) {
    t.notSame(catalog.get(type, 'ru').title, catalog.get(type, 'en').title, `${type} is translated`);
  }
});

t.test('rendering escapes substitutions for the target format, never the template text', async (t) => {
  const ctx = { name: '<b>x</b> & *y* _z_ [l](u)', items: [{ n: 'a<' }, { n: 'b' }], empty: [], flag: true };
  t.equal(render('<i>{{name}}</i>', ctx, 'html'), '<i>&lt;b&gt;x&lt;/b&gt; &amp; *y* _z_ [l](u)</i>');
  t.equal(render('**{{name}}**', ctx, 'markdown'), '**\\<b\\>x\\</b\\> & \\*y\\* \\_z\\_ \\[l\\]\\(u\\)**');
  t.equal(render('{{name}}', ctx, 'text'), ctx.name);
  t.equal(render('{{#each items}}{{@index}}:{{n}};{{/each}}', ctx, 'html'), '0:a&lt;;1:b;');
  t.equal(render('{{#if empty}}yes{{else}}no{{/if}} {{#if flag}}on{{/if}} {{count items}}', ctx, 'text'), 'no on 2');
  t.equal(render('{{__proto__.polluted}}{{constructor.name}}', ctx, 'text'), '', 'prototype paths resolve to nothing');
  t.throws(() => parseTemplate('{{#each x}}open'), { message: /unclosed/ });
  t.throws(() => parseTemplate('{{/if}}'), { message: /unexpected/ });
  t.ok(new TemplateError('x') instanceof Error);
});

t.test('a locale without a template falls back to English; sensitive extras are redacted', async (t) => {
  const plugins = await loadPlugins(['herald-plugin-example']);
  const catalog = new TemplateCatalog(plugins, '/nonexistent');
  (plugins[0]!.def.manifest.templates as any).ru = {};
  const c2 = new TemplateCatalog(plugins, '/nonexistent');
  const m = renderMessage(c2, {
    deliveryId: 'd',
    eventId: 'e',
    eventType: 'thing_happened',
    severity: 'info',
    locale: 'ru',
    payload: { name: 'door' },
    extras: { note: 'password=hunter22 and more', oauth_token: 'abc' },
    providerKind: 'example',
    targetName: 'T',
    occurredAt: '2026-01-01T00:00:00Z',
    formats: ['html'],
  });
  t.equal(m.title, 'Thing: door', 'English fallback');
  t.notMatch(m.body, /hunter22/);
  t.ok(catalog);
});
