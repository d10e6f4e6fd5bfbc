/**
 * What an author sees when the plugin throws: an exception in create() or send() is logged at
 * WARNING with the plugin's id and the stack (in the plugin's own file), and a programming error
 * (TypeError, ReferenceError, SyntaxError) in a provider's create() marks the record `error`
 * instead of retrying it in the background forever; any other failure still retries.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

const scratch = fileURLToPath(new URL('../../test-output/', import.meta.url));
const WARN = 'warn';

/** A plugin package written to a directory under the repository (so it resolves the contract), loaded by its path. */
function plugin(
  t: { teardown(fn: () => void): void },
  name: string,
  kind: 'provider' | 'target',
  source: string,
): string {
  fs.mkdirSync(scratch, { recursive: true });
  const dir = fs.mkdtempSync(path.join(scratch, 'diagnostics-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', type: 'module', exports: './index.js', herald: { apiVersion: 1, kind } }),
  );
  fs.writeFileSync(
    path.join(dir, 'index.js'),
    `import { defineProvider, defineTarget, Type } from '@herald/plugin-api';\n${source}\n`,
  );
  return dir;
}

const texts = (label: string) => ({
  en: { displayName: label, description: `${label}.`, config: { mode: { label: 'Mode' } } },
  ru: { displayName: label, description: `${label}.`, config: { mode: { label: 'Режим' } } },
});

t.test(
  'exceptions in create() and send() are logged with the plugin id and the stack; a programming error in create() ' +
    'is not retried',
  async (t) => {
    const provider = plugin(
      t,
      'herald-provider-crashy',
      'provider',
      `
    export default defineProvider({
      manifest: { id: 'crashy', kind: 'provider', apiVersion: 1, displayName: 'Crashy', description: ` +
        `'Crashy.', ingest: 'webhook',
        configSchema: Type.Object({ mode: Type.String() }), events: {}, templates: {}, locales: ` +
        `${JSON.stringify(texts('Crashy'))} },
      create: (ctx) => {
        if (ctx.config.mode === 'bug') { const settings = undefined; return settings.open(); }
        if (ctx.config.mode === 'down') throw new Error('the Crashy service is down');
        return {};
      },
    });`,
    );
    const target = plugin(
      t,
      'herald-target-crashy',
      'target',
      `
    export default defineTarget({
      manifest: { id: 'crashy_target', kind: 'target', apiVersion: 1, displayName: 'Crashy target', ` +
        `description: 'Crashy target.',
        configSchema: Type.Object({ mode: Type.String() }), limits: { maxMessageLength: 1000, formats: ` +
        `['text'] }, locales: ${JSON.stringify(texts('Crashy target'))} },
      create: (ctx) => ({
        async send(message) { if (ctx.config.mode === 'bug') return message.nothing.length; },
      }),
    });`,
    );
    const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},${provider},${target}` });
    t.teardown(() => s.stop());
    const token = s.admin.token;
    const warnings = (plugin: string) => s.logs().filter((l) => l.level === WARN && l.plugin === plugin);

    // A TypeError in create(): the record is `error` at once, with no retry scheduled.
    const bug = await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'crashy', name: 'Bug', config: { mode: 'bug' } },
    });
    t.equal(bug.status, 201, bug.text);
    const shown = (await s.request('GET', `/api/providers/${bug.body.id}`, { token })).body;
    t.equal(shown.status, 'error', 'marked error, not retrying');
    t.match(shown.status_detail, /TypeError: Cannot read properties of undefined \(reading 'open'\)/);
    t.match(shown.status_detail, /programming error in the plugin/);
    const entry = s.service.core.plugins.runningProvider(bug.body.id) as { state: string; timer?: unknown } | undefined;
    t.equal(entry?.state, 'error');
    t.equal(entry?.timer, undefined, 'no retry is scheduled');
    const [created] = warnings('crashy');
    t.ok(created, 'logged at WARNING with the plugin id');
    t.equal(created.provider_id, bug.body.id);
    t.match(created.stack, /^TypeError: Cannot read properties of undefined/);
    t.match(
      created.stack,
      new RegExp(`${provider.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/index\\.js:\\d+`),
      'the stack points into the plugin',
    );

    // Any other failure in create(): retried in the background as before, and logged the same way.
    const down = await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'crashy', name: 'Down', config: { mode: 'down' } },
    });
    t.equal((await s.request('GET', `/api/providers/${down.body.id}`, { token })).body.status, 'retrying');
    const downLine = warnings('crashy').find((l) => l.provider_id === down.body.id);
    t.match(downLine?.stack, /^Error: the Crashy service is down\n\s+at Object\.create \(.*index\.js:\d+/);

    // A TypeError in send(): the delivery fails as usual, and the log says which plugin and where.
    const source = await s.request('POST', '/api/providers', {
      token,
      body: { kind: 'example', name: 'Source', config: { shared_token: 'sharedtoken1' } },
    });
    const tracker = (
      await s.request('POST', '/api/trackers', { token, body: { provider_id: source.body.id, name: 'T' } })
    ).body;
    const tg = await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'crashy_target', name: 'Crashy', config: { mode: 'bug' }, locale: 'en' },
    });
    t.equal(tg.status, 201, tg.text);
    t.ok((await s.request('PUT', `/api/trackers/${tracker.id}/targets/${tg.body.id}`, { token })).status < 300);
    const hook = source.body.webhook_url.replace(/^https?:\/\/[^/]+/, '');
    t.equal(
      (
        await s.request('POST', hook, {
          headers: { 'x-example-token': 'sharedtoken1' },
          body: { type: 'thing_happened', payload: { name: 'x' } },
        })
      ).status,
      202,
    );
    let sent: Record<string, any> | undefined;
    for (let i = 0; i < 200 && !sent; i++) {
      sent = warnings('crashy_target')[0];
      if (!sent) await new Promise((r) => setTimeout(r, 50));
    }
    t.ok(sent, 'the send failure is logged at WARNING with the plugin id');
    t.equal(sent?.target_id, tg.body.id);
    t.match(sent?.stack, /^TypeError: Cannot read properties of undefined \(reading 'length'\)/);
    t.match(sent?.stack, /index\.js:\d+/, 'the stack points into the plugin');
    t.match(sent?.msg, /crashy_target.*TypeError/);
  },
);
