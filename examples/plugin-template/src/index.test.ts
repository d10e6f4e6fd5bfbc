/**
 * Runs the provider against a loopback fake of the status endpoint with the contract's test host:
 * no Herald service, no database. `npm test` runs it with Node's own test runner.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { validatePlugin } from '@herald/plugin-api';
import { createTestHost } from '@herald/plugin-api/testing';
import pkg from '../package.json' with { type: 'json' };
import plugin, { STATUS_CHANGED } from './index.ts';

/** The fake endpoint: serves `components`, and answers 401 without the right key. */
let components = [{ id: 'db', name: 'Database', status: 'operational' }, { id: 'web', name: 'Website', status: 'operational' }];
const server = http.createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer k3y') { res.writeHead(401).end(); return; }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ components }));
});
let url = '';
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status.json`;
});
after(() => server.close());

const trackers = [
  { id: 'all', name: 'Everything', enabled: true, config: { component_ids: [] } },
  { id: 'db-only', name: 'Database', enabled: true, config: { component_ids: ['db'] } },
];

test('emits a status change to the trackers that follow the component', async () => {
  const host = createTestHost();
  const { instance, emitted, abort } = await host.provider(plugin, { url, api_key: 'k3y' }, { trackers });
  await instance.start?.();
  await instance.poll!({ trackers, signal: abort.signal });
  assert.equal(emitted.length, 0, 'the first poll only records a baseline');

  components = [{ id: 'db', name: 'Database', status: 'outage' }, { id: 'web', name: 'Website', status: 'degraded' }];
  await instance.poll!({ trackers, signal: abort.signal });
  assert.deepEqual(emitted.map((e) => [e.type, e.payload.component_id, e.trackerIds, e.severity]), [
    [STATUS_CHANGED, 'db', ['all', 'db-only'], 'critical'],
    [STATUS_CHANGED, 'web', ['all'], 'warning'],
  ]);
  assert.equal(emitted[0]!.payload.previous_status, 'operational');

  await instance.poll!({ trackers, signal: abort.signal });
  assert.equal(emitted.length, 2, 'no change, no event');
});

test('a rejected API key is an AuthFailedError: the core disables the instance', async () => {
  const host = createTestHost();
  const { instance } = await host.provider(plugin, { url, api_key: 'wrong' });
  await assert.rejects(async () => instance.start?.(), { code: 'AUTH_FAILED', statusCode: 401 });
});

test('the config is validated and defaulted as the core does it', async () => {
  const host = createTestHost();
  await assert.rejects(host.provider(plugin, { url: 'ftp://example.net' }), /invalid config/);
});

test('the core accepts the plugin without an error or a warning', () => {
  // What Herald checks at load: apiVersion and kind as in package.json, schemas JSON can hold and the
  // web form can show, no reserved field misused, every string in English and Russian.
  const { errors, warnings } = validatePlugin(plugin, { packageJson: pkg });
  assert.deepEqual([...errors, ...warnings], []);
});
