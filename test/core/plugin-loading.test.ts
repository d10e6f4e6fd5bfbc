/**
 * SERVICE_PLUGINS by absolute directory path, and the three load errors an operator can see, each
 * verbatim: not installed, installed but failed to import, not a Herald plugin.
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadPlugins, PluginLoadError } from '../../core/src/plugins/loader.ts';
import { startService, startSink, TEST_PLUGINS } from '../helpers/service.ts';

const external = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/external');
const dir = (name: string) => path.join(external, name);

t.test('a plugin loads by its absolute directory path and delivers through the real service', async (t) => {
  const byPath = dir('herald-provider-by-path');
  const [p] = await loadPlugins([byPath]);
  t.equal(p!.id, 'by_path');
  t.equal(p!.packageName, 'herald-provider-by-path', 'named by its package.json');

  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},${byPath}` });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const prov = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'by_path', name: 'By path', config: { token: 'sharedtoken1' } },
  });
  t.equal(prov.status, 201, prov.text);
  const tr = (await s.request('POST', '/api/trackers', { token, body: { provider_id: prov.body.id, name: 'T' } })).body;
  const tg = (
    await s.request('POST', '/api/targets', {
      token,
      body: { kind: 'recorder', name: 'R', config: { url: sink.url }, locale: 'en' },
    })
  ).body;
  t.equal((await s.request('PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, { token })).status < 300, true, 'linked');
  const hook = prov.body.webhook_url.replace(/^https?:\/\/[^/]+/, '');
  const r = await s.request('POST', hook, { headers: { 'x-token': 'sharedtoken1' }, body: { text: 'hello' } });
  t.equal(r.status, 202, r.text);
  const got = await sink.waitFor(1, 10_000);
  t.equal(got.length, 1, 'delivered');
  t.match(got[0].body.body, /by path: hello/);
});

t.test('the three load errors, verbatim', async (t) => {
  const fails = async (spec: string, message: string, what: string) => {
    const err = await loadPlugins([spec]).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, PluginLoadError, what);
    t.equal((err as Error).message, message, what);
  };

  await fails(
    'herald-plugin-that-does-not-exist',
    'Plugin package "herald-plugin-that-does-not-exist" is not installed: it is not in the service\'s ' +
      'node_modules. Install it (npm install herald-plugin-that-does-not-exist, or npm install ' +
      './herald-plugin-that-does-not-exist-<version>.tgz) or remove it from SERVICE_PLUGINS.',
    'not installed (by name)',
  );
  await fails(
    dir('nowhere'),
    `Plugin package at "${dir('nowhere')}" is not installed: that directory does not exist. Fix the path in ` +
      `SERVICE_PLUGINS (a directory holding the plugin's package.json) or remove it.`,
    'not installed (by path)',
  );

  await fails(
    dir('broken-import'),
    `Plugin package "herald-broken-import" (${dir('broken-import')}) is installed but failed to import: Cannot ` +
      `find package 'herald-dependency-nobody-installed' imported from ${dir('broken-import')}/index.js. Fix or ` +
      'reinstall the package (a missing dependency needs npm install where the plugin lives), or remove it from ' +
      'SERVICE_PLUGINS.',
    'failed to import: the real error, not "not installed"',
  );

  await fails(
    dir('not-a-plugin'),
    `Plugin package "not-a-plugin" (${dir('not-a-plugin')}) is not a Herald plugin: its package.json has no ` +
      '"herald" block ({"apiVersion": 1, "kind": "provider" or "target"}). Check the name in SERVICE_PLUGINS.',
    'not a Herald plugin: no herald block',
  );
  await fails(
    dir('wrong-api-version'),
    `Plugin package "herald-from-the-future" (${dir('wrong-api-version')}) is not a Herald plugin for this ` +
      'version: it speaks plugin API version 2, but this Herald speaks version 1. Install a version of the plugin ' +
      'made for plugin API 1, or remove it from SERVICE_PLUGINS.',
    'not a Herald plugin: wrong apiVersion',
  );
  await fails(
    dir('no-manifest'),
    'Plugin package "herald-no-manifest" is not a Herald plugin: it has no default export made with ' +
      'defineProvider() or defineTarget(). Check the name in SERVICE_PLUGINS.',
    'not a Herald plugin: no manifest export',
  );
});

t.test("a directory path never surfaces Node's raw directory-import error", async (t) => {
  const err = (await loadPlugins([external]).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error;
  t.type(err, PluginLoadError);
  t.notMatch(err.message, /Directory import/);
  t.match(err.message, /is not installed: that directory has no package\.json/);
});
