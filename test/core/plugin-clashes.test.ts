/** What SERVICE_PLUGINS may and may not combine: one package named twice, and two plugins sharing an event type. */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { FIRST_PARTY_PLUGINS } from '../../core/src/config/config.ts';
import { loadPlugins, PluginLoadError } from '../../core/src/plugins/loader.ts';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');

t.test('the same package named by its name and by its path loads once', async (t) => {
  const loaded = await loadPlugins(['herald-plugin-example', path.join(fixtures, 'plugins/herald-plugin-example')]);
  t.same(
    loaded.map((p) => p.id),
    ['example'],
  );
});

t.test('two plugins declaring one event type are refused, naming both and the type', async (t) => {
  const err = await loadPlugins(['herald-plugin-example', path.join(fixtures, 'clash')]).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(err, PluginLoadError);
  t.equal(
    (err as Error).message,
    'Plugin packages "herald-plugin-example" and "herald-provider-clash" both declare the event type ' +
      '"thing_happened"; event types must be unique (prefix them with the plugin id), so enable only one.',
  );
});

t.test('the first-party plugins load together', async (t) => {
  const loaded = await loadPlugins([...FIRST_PARTY_PLUGINS]);
  t.equal(loaded.length, FIRST_PARTY_PLUGINS.length);
});
