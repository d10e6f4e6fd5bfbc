import http from 'node:http';
import type { TrackerView } from '@herald/plugin-api';
import { createTestHost, validateConfig } from '@herald/plugin-api/testing';
import t from 'tap';
import type { FakeAsset } from '../test/fakes/immich.ts';
import { FakeImmich } from '../test/fakes/immich.ts';
import { diffAlbum } from './diff.ts';
import plugin from './index.ts';

const ANNA = { id: '5f0c1a2b-0000-4000-8000-000000000001', name: 'Anna Petrova', email: 'anna@example.net' };
const IVAN = { id: '5f0c1a2b-0000-4000-8000-000000000002', name: 'Ivan Sidorov', email: 'ivan@example.net' };
const asset = (n: number, owner = ANNA.id, extra: Partial<FakeAsset> = {}): FakeAsset => ({
  id: `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  fileName: `IMG_${1000 + n}.jpg`,
  ownerId: owner,
  ...extra,
});
const tracker = (id: string, albumIds: string[], enabled = true): TrackerView => ({
  id,
  name: id,
  enabled,
  config: { album_ids: albumIds },
});

interface Setup {
  version?: 2 | 3;
  trackers?: TrackerView[];
  apiKey?: string;
  timeout?: number;
}

/** A fake Immich with one shared album (Anna owns, Ivan is a member) and a provider pointed at it. */
async function setup(t: { teardown: (fn: () => Promise<void>) => void }, o: Setup = {}) {
  const fake = new FakeImmich({ version: o.version ?? 2 });
  const url = await fake.listen();
  t.teardown(() => fake.close());
  fake.addUser(ANNA);
  fake.addUser(IVAN);
  const trip = fake.createAlbum({
    name: 'Trip to Karelia',
    ownerId: ANNA.id,
    memberIds: [IVAN.id],
    assets: [asset(1), asset(2)],
  });
  const trackers = o.trackers ?? [tracker('t-trip', [trip])];
  const host = createTestHost();
  const h = await host.provider(
    plugin,
    { base_url: `${url}/`, api_key: o.apiKey ?? fake.apiKey, timeout_seconds: o.timeout ?? 15 },
    { trackers },
  );
  const poll = () => h.instance.poll!({ trackers: h.trackers, signal: h.abort.signal });
  return { fake, url, trip, h, poll };
}

const payloadOk = (p: Record<string, unknown>) =>
  validateConfig(plugin.manifest.events!.album_assets_changed!.payload, p);

t.test('manifest', async (t) => {
  const m = plugin.manifest;
  t.equal(m.id, 'immich');
  t.equal(m.displayName, 'Immich (photo library)');
  t.equal(m.ingest, 'poll');
  t.equal(m.pollIntervalSeconds, 60);
  t.equal(m.events!.album_assets_changed!.quietHours, 'defer');
  t.ok(m.templates!.en!.album_assets_changed && m.templates!.ru!.album_assets_changed);
  t.throws(() => validateConfig(m.trackerSchema, { album_ids: [] }), 'a tracker follows at least one album');
  t.same(validateConfig(m.trackerSchema, { album_ids: ['x'] }), { album_ids: ['x'] });
});

t.test('the first poll records the baseline silently', async (t) => {
  const { fake, h, poll } = await setup(t);
  await poll();
  t.same(h.emitted, []);
  t.ok(
    fake.requests.every((r) => r.authorized),
    'every request carried the x-api-key header',
  );
  t.match(fake.requests.find((r) => r.url.startsWith('/api/albums/'))!.url, /withoutAssets=false$/);
  await poll();
  t.same(h.emitted, [], 'nothing changed, nothing emitted');
});

t.test('added assets are reported with file names and who added them', async (t) => {
  const { fake, url, trip, h, poll } = await setup(t);
  await poll();
  fake.addAssets(trip, [asset(3, IVAN.id), asset(4, ANNA.id, { type: 'VIDEO', fileName: 'VID_0004.mp4' })]);
  await poll();
  t.equal(h.emitted.length, 1);
  const e = h.emitted[0]!;
  t.equal(e.type, 'album_assets_changed');
  t.same(e.trackerIds, ['t-trip']);
  payloadOk(e.payload);
  t.same(e.payload, {
    album_id: trip,
    album_name: 'Trip to Karelia',
    assets_added: [
      { id: asset(3).id, file_name: 'IMG_1003.jpg', added_by: 'Ivan Sidorov' },
      { id: asset(4).id, file_name: 'VID_0004.mp4', added_by: 'Anna Petrova' },
    ],
    assets_removed: [],
    added_count: 2,
    removed_count: 0,
    album_url: `${url}/albums/${trip}`,
  });
  await poll();
  t.equal(h.emitted.length, 1, 'the new baseline holds');
});

t.test('removed assets are reported with the file names from the baseline', async (t) => {
  const { fake, trip, h, poll } = await setup(t);
  await poll();
  fake.removeAssets(trip, [asset(1).id]);
  fake.addAssets(trip, [asset(5)]);
  await poll();
  t.equal(h.emitted.length, 1);
  t.match(h.emitted[0]!.payload, {
    assets_added: [{ id: asset(5).id, file_name: 'IMG_1005.jpg', added_by: 'Anna Petrova' }],
    assets_removed: [{ id: asset(1).id, file_name: 'IMG_1001.jpg' }],
    added_count: 1,
    removed_count: 1,
  });
});

t.test('two trackers on different albums only get their own album events', async (t) => {
  const fake = new FakeImmich();
  const url = await fake.listen();
  t.teardown(() => fake.close());
  fake.addUser(ANNA);
  const a = fake.createAlbum({ name: 'Garden', ownerId: ANNA.id, assets: [asset(1)] });
  const b = fake.createAlbum({ name: 'Kids', ownerId: ANNA.id, assets: [asset(2)] });
  const trackers = [
    tracker('t-a', [a]),
    tracker('t-b', [b]),
    tracker('t-both', [a, b, a]),
    tracker('t-off', [a, b], false),
  ];
  const h = await createTestHost().provider(plugin, { base_url: url, api_key: fake.apiKey }, { trackers });
  const poll = () => h.instance.poll!({ trackers, signal: h.abort.signal });
  await poll();
  t.equal(
    fake.requests.filter((r) => r.url.startsWith(`/api/albums/${a}`)).length,
    1,
    'an album followed by several trackers is read once',
  );
  fake.addAssets(a, [asset(3)]);
  await poll();
  t.equal(h.emitted.length, 1);
  t.same(h.emitted[0]!.trackerIds, ['t-a', 't-both'], 'only the trackers following the album, not the disabled one');
  t.equal(h.emitted[0]!.payload.album_name, 'Garden');
  fake.addAssets(b, [asset(4)]);
  fake.removeAssets(a, [asset(1).id]);
  await poll();
  t.equal(h.emitted.length, 3);
  const byAlbum = Object.fromEntries(h.emitted.slice(1).map((e) => [e.payload.album_name as string, e.trackerIds]));
  t.same(byAlbum, { Garden: ['t-a', 't-both'], Kids: ['t-b', 't-both'] });
});

t.test('an album no longer followed is forgotten and seeded again silently', async (t) => {
  const { fake, trip, h } = await setup(t);
  const following = [tracker('t-trip', [trip])];
  const poll = (trackers: TrackerView[]) => h.instance.poll!({ trackers, signal: h.abort.signal });
  await poll(following);
  await poll([tracker('t-trip', [trip], false)]);
  fake.addAssets(trip, [asset(9)]);
  await poll(following);
  t.same(h.emitted, [], 'changes made while nobody followed the album are not reported');
  fake.addAssets(trip, [asset(10)]);
  await poll(following);
  t.equal(h.emitted.length, 1);
  t.equal(h.emitted[0]!.payload.added_count, 1);
});

t.test(
  'a poll of an unchanged album writes nothing and reads the index once; a change of albums writes it',
  async (t) => {
    const { fake, trip, h } = await setup(t);
    const writes: string[] = [];
    const reads: string[] = [];
    const set = h.store.set.bind(h.store);
    const get = h.store.get.bind(h.store);
    h.store.set = async (key, value, o) => {
      writes.push(key);
      await set(key, value, o);
    };
    h.store.get = async <T>(key: string) => {
      reads.push(key);
      return get<T>(key);
    };
    const poll = (trackers: TrackerView[]) => h.instance.poll!({ trackers, signal: h.abort.signal });
    await poll([tracker('t-trip', [trip])]);
    t.same(writes, ['albums', `album:${trip}`], 'the first poll writes the index and the baseline');
    writes.length = 0;
    await poll([tracker('t-trip', [trip])]);
    await poll([tracker('t-trip', [trip])]);
    t.same(writes, [], 'polls that find nothing new write nothing');
    t.same(
      reads,
      ['albums', `album:${trip}`, `album:${trip}`, `album:${trip}`],
      'the index is read once, then remembered',
    );
    const other = fake.createAlbum({ name: 'Garden', ownerId: ANNA.id, assets: [asset(20)] });
    await poll([tracker('t-trip', [trip]), tracker('t-garden', [other])]);
    t.same(writes, ['albums', `album:${other}`], 'an album followed since: the index and its baseline');
    t.same(await h.store.get('albums'), [trip, other]);
    writes.length = 0;
    await poll([tracker('t-trip', [trip])]);
    t.same(writes, ['albums'], 'one no longer followed: the index');
    t.same(await h.store.get('albums'), [trip]);
  },
);

t.test('a rejected API key fails with AuthFailedError', async (t) => {
  const { h, poll } = await setup(t, { apiKey: 'wrong-key-7f3a9c' });
  const err = await poll().then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(err, { code: 'AUTH_FAILED', message: /401: Invalid API key/ });
  t.notMatch(err!.message, /wrong-key-7f3a9c/, 'the key is not in the error');
  await t.rejects(async () => h.instance.start!(), { code: 'AUTH_FAILED' }, 'start() checks the key');
  t.notMatch(JSON.stringify(h.log.lines), /wrong-key-7f3a9c/, 'nor in the logs');
  t.equal((await h.instance.health!()).status, 'degraded');
});

t.test('start() succeeds with a good key', async (t) => {
  const { fake, h } = await setup(t);
  await h.instance.start!();
  t.same(
    fake.requests.map((r) => r.url),
    ['/api/server/ping', '/api/users/me'],
  );
});

t.test('5xx, hangs and unreachable servers fail the poll with NotReadyError', async (t) => {
  const { fake, h, poll } = await setup(t, { timeout: 1 });
  fake.failStatus = 500;
  await t.rejects(poll(), { code: 'NOT_READY', message: /500: Internal server error/ });
  await t.rejects(async () => h.instance.start!(), { code: 'NOT_READY' });
  fake.failStatus = 503;
  await t.rejects(poll(), { code: 'NOT_READY', message: /503/ });
  fake.failStatus = null;
  fake.hanging = true;
  const started = Date.now();
  await t.rejects(poll(), { code: 'NOT_READY', message: /timed out/ });
  t.ok(Date.now() - started < 5000, 'the request time limit applies');
  fake.hanging = false;
  await poll();
  t.equal((await h.instance.health!()).status, 'ok', 'recovers');
  await fake.close();
  await t.rejects(poll(), { code: 'NOT_READY', message: /cannot reach Immich/ });
});

t.test('a missing album is skipped, the others still notify, then the poll fails naming it', async (t) => {
  const fake = new FakeImmich();
  const url = await fake.listen();
  t.teardown(() => fake.close());
  fake.addUser(ANNA);
  const good = fake.createAlbum({ name: 'Good', ownerId: ANNA.id, assets: [asset(1)] });
  const gone = fake.createAlbum({ name: 'Gone', ownerId: ANNA.id, assets: [asset(2)] });
  const trackers = [tracker('t-gone', [gone]), tracker('t-good', [good])];
  const h = await createTestHost().provider(plugin, { base_url: url, api_key: fake.apiKey }, { trackers });
  const poll = () => h.instance.poll!({ trackers, signal: h.abort.signal });
  await poll();
  fake.deleteAlbum(gone);
  fake.addAssets(good, [asset(3)]);
  await t.rejects(poll(), new RegExp(`not found or not accessible: ${gone}`));
  t.equal(h.emitted.length, 1, 'the good album still notified');
  t.equal(h.emitted[0]!.payload.album_name, 'Good');
  t.ok(
    h.log.lines.some((l) => l.level === 'warn' && (l.obj as { album_id?: string }).album_id === gone),
    'the missing album is logged',
  );
  t.match(await h.instance.health!(), { status: 'degraded', detail: new RegExp(gone) });
});

t.test('Immich 3: assets come from paged metadata search, archived ones included', async (t) => {
  const { fake, trip, h, poll } = await setup(t, { version: 3 });
  const many = Array.from({ length: 1500 }, (_, i) => asset(100 + i, i % 2 ? IVAN.id : ANNA.id));
  fake.addAssets(trip, many);
  fake.addAssets(trip, [asset(9000, ANNA.id, { visibility: 'archive' })]);
  await poll();
  t.same(h.emitted, []);
  const searches = fake.requests.filter((r) => r.url === '/api/search/metadata');
  t.equal(searches.length, 3, 'two timeline pages and one archive page');
  fake.removeAssets(trip, [asset(9000).id, asset(100).id]);
  fake.addAssets(trip, [asset(9001, IVAN.id, { visibility: 'archive' })]);
  await poll();
  t.equal(h.emitted.length, 1);
  t.match(h.emitted[0]!.payload, {
    assets_added: [{ id: asset(9001).id, file_name: 'IMG_10001.jpg', added_by: 'Ivan Sidorov' }],
    added_count: 1,
    removed_count: 2,
  });
  t.same(
    (h.emitted[0]!.payload.assets_removed as { id: string }[]).map((r) => r.id).sort(),
    [asset(100).id, asset(9000).id].sort(),
  );
});

t.test('long change lists are capped at 50 with full counts', async (t) => {
  const { fake, trip, h, poll } = await setup(t);
  await poll();
  fake.addAssets(
    trip,
    Array.from({ length: 120 }, (_, i) => asset(200 + i)),
  );
  await poll();
  const p = h.emitted[0]!.payload;
  payloadOk(p);
  t.equal((p.assets_added as unknown[]).length, 50);
  t.equal(p.added_count, 120);
});

t.test('a failed emit keeps the old baseline so the change is reported again', async (t) => {
  const fake = new FakeImmich();
  const url = await fake.listen();
  t.teardown(() => fake.close());
  fake.addUser(ANNA);
  const album = fake.createAlbum({ name: 'A', ownerId: ANNA.id, assets: [asset(1)] });
  const trackers = [tracker('t', [album])];
  const h = await createTestHost().provider(plugin, { base_url: url, api_key: fake.apiKey }, { trackers });
  const poll = () => h.instance.poll!({ trackers, signal: h.abort.signal });
  await poll();
  fake.addAssets(album, [asset(2)]);
  const push = h.emitted.push.bind(h.emitted);
  h.emitted.push = () => {
    throw new Error('database is locked');
  };
  await t.rejects(poll(), /database is locked/);
  h.emitted.push = push;
  await poll();
  t.equal(h.emitted.length, 1);
  t.equal(h.emitted[0]!.payload.added_count, 1);
});

t.test(
  'an album whose asset set is unchanged yields no change, whatever else changed: the plugin never emits empty lists',
  (t) => {
    const baseline = { assets: { a1: 'IMG_1.jpg', a2: 'IMG_2.jpg' } };
    const album = {
      id: 'x',
      name: 'Renamed album',
      users: new Map<string, string>(),
      assets: new Map([
        ['a2', { id: 'a2', fileName: 'IMG_2_renamed.jpg' }],
        ['a1', { id: 'a1', fileName: 'IMG_1.jpg' }],
      ]),
    };
    t.equal(
      diffAlbum(album, baseline, 'https://immich.example/albums/x'),
      undefined,
      'same ids in another order, new name: nothing to report',
    );
    const change = diffAlbum(
      { ...album, assets: new Map([['a1', { id: 'a1', fileName: 'IMG_1.jpg' }]]) },
      baseline,
      'https://immich.example/albums/x',
    );
    t.ok(change && change.assets_added.length + change.assets_removed.length > 0, 'a change always lists an asset');
    t.end();
  },
);

t.test('the API key stays on its origin when base_url redirects to another one', async (t) => {
  // The real Immich (recording every request) is the second origin; base_url is a server that
  // answers every request with 302 to the same path there.
  const fake = new FakeImmich();
  const target = await fake.listen();
  t.teardown(() => fake.close());
  const moved = http.createServer((req, res) => res.writeHead(302, { location: `${target}${req.url}` }).end());
  await new Promise<void>((r) => moved.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    moved.closeAllConnections();
    moved.close();
  });
  const seenByFirst: (string | undefined)[] = [];
  moved.prependListener('request', (req: http.IncomingMessage) => {
    seenByFirst.push(req.headers['x-api-key'] as string | undefined);
  });

  t.same(plugin.manifest.credentialHeaders, ['x-api-key'], 'the plugin declares its credential header');
  const h = await createTestHost().provider(plugin, {
    base_url: `http://127.0.0.1:${(moved.address() as { port: number }).port}`,
    api_key: fake.apiKey,
  });
  await t.rejects(
    async () => h.instance.start!(),
    { code: 'AUTH_FAILED', message: /Authentication required/ },
    'the redirected request arrives without a key and is refused',
  );
  t.same(
    fake.requests.map((r) => r.url),
    ['/api/server/ping', '/api/users/me'],
    'the requests did reach the second origin',
  );
  t.ok(
    fake.requests.every((r) => !r.authorized),
    'none of them carried the key',
  );
  t.same(seenByFirst, [fake.apiKey, fake.apiKey], 'base_url itself received it');
});
