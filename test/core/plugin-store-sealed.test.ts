/**
 * Values a plugin stores sealed (`store.set(key, value, { sealed: true })`, contract 1.3.0): the
 * `plugin_store` row holds only the sealed text, `get` opens it, plain values stay plain JSON, a
 * rotation of SERVICE_SECRET_KEY seals them again with the new key, and `herald doctor`'s check
 * names the instance whose sealed value no key opens. Runs on SQLite and PostgreSQL.
 */

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { unreadableSecrets } from '../../core/src/cli/secret-key.ts';
import { DbInstanceStore } from '../../core/src/plugins/store.ts';
import { SecretsAtRest } from '../../core/src/secrets/at-rest.ts';
import { startService, type TestService } from '../helpers/service.ts';

const DEVICE = {
  userId: '@herald:example.org',
  deviceId: 'HERALDDEV',
  ed25519Seed: 'c2VlZC1vZi10aGUtZGV2aWNlLXByaXZhdGUta2V5',
  nextKeyId: 7,
};
const INSTANCE = 'tg_sealed_store_instance';

const dir = (t: Test) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-store-sealed-'));
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
};
const stored = async (s: TestService, key: string) =>
  (
    await s.service.core.db.get<{ value: string }>('SELECT value FROM plugin_store WHERE instance_id = ? AND key = ?', [
      INSTANCE,
      key,
    ])
  )?.value;
const store = (s: TestService) =>
  new DbInstanceStore(s.service.core.db, INSTANCE, () => new Date(), s.service.core.atRest);

t.test('a sealed value is stored sealed and read back clear; a plain one stays JSON', async (t) => {
  const s = await startService({}, { dataDir: dir(t) });
  t.teardown(() => s.stop());
  const st = store(s);
  await st.set('e2ee.device', DEVICE, { sealed: true });
  const raw = (await stored(s, 'e2ee.device'))!;
  t.match(raw, /^enc:v1:/, 'the row holds the sealed text');
  t.notMatch(raw, /HERALDDEV|c2VlZC1v|herald:example/, 'and nothing of the value in the clear');
  t.same(JSON.parse(s.service.core.atRest.open(raw)), DEVICE, "sealed with the service's key");
  t.same(await st.get('e2ee.device'), DEVICE, 'get opens it');

  await st.set('since', 'enc:v1:not-a-sealed-value');
  t.equal(
    await stored(s, 'since'),
    '"enc:v1:not-a-sealed-value"',
    'a plain value is JSON, even a string that looks sealed',
  );
  t.equal(await st.get('since'), 'enc:v1:not-a-sealed-value', 'and reads back as it was');

  await st.set('e2ee.device', { ...DEVICE, nextKeyId: 8 });
  t.equal(
    await stored(s, 'e2ee.device'),
    JSON.stringify({ ...DEVICE, nextKeyId: 8 }),
    'a later plain set of the key stores it plain',
  );
  t.ok(await st.setIfAbsent('token', { secret: 'obtained-token-1' }, { sealed: true }), 'setIfAbsent seals too');
  t.match(await stored(s, 'token'), /^enc:v1:/);
  t.same(await st.get('token'), { secret: 'obtained-token-1' });
  t.notOk(await st.setIfAbsent('token', { secret: 'other' }, { sealed: true }), 'and keeps what is there');

  const keyless = new DbInstanceStore(s.service.core.db, INSTANCE, () => new Date());
  await t.rejects(
    keyless.set('x', 1, { sealed: true }),
    /cannot seal values/,
    'a store without the key refuses to seal',
  );
  await t.rejects(keyless.get('token'), { code: 'CONFIG' }, 'and to open');
  await t.rejects(
    new DbInstanceStore(
      s.service.core.db,
      INSTANCE,
      () => new Date(),
      new SecretsAtRest(crypto.randomBytes(32).toString('hex')),
    ).get('token'),
    {
      code: 'CONFIG',
      message: /a value this plugin instance stored sealed cannot be decrypted with SERVICE_SECRET_KEY/,
    },
    'another key cannot open it: a configuration error, not a crash',
  );
});

t.test('rotation seals the stored values again with the new key; a value no key opens is named', async (t) => {
  const d = dir(t);
  const [oldKey, newKey] = [crypto.randomBytes(32).toString('hex'), crypto.randomBytes(32).toString('hex')];
  let s = await startService({ SERVICE_SECRET_KEY: oldKey }, { dataDir: d });
  t.teardown(() => s.stop());
  await store(s).set('e2ee.device', DEVICE, { sealed: true });
  await store(s).set('plain', { n: 1 });
  await s.service.core.db.run('INSERT INTO plugin_store (instance_id, key, value, expires_at) VALUES (?, ?, ?, NULL)', [
    'tg_other_instance',
    'k',
    new SecretsAtRest(crypto.randomBytes(32).toString('hex')).seal('{}'),
  ]);
  t.same(
    await unreadableSecrets(s.service.core.db, s.service.core.atRest),
    ['plugin_store tg_other_instance'],
    'doctor names the instance whose value no key opens',
  );
  const before = (await stored(s, 'e2ee.device'))!;
  await s.stop();

  s = await startService(
    { SERVICE_SECRET_KEY: newKey, SERVICE_SECRET_KEY_PREVIOUS: oldKey },
    { dataDir: d, setup: false },
  );
  const after = (await stored(s, 'e2ee.device'))!;
  t.not(after, before, 'sealed again at boot');
  t.equal(new SecretsAtRest(newKey).state(after), 'current', 'with the new key');
  t.equal(await stored(s, 'plain'), '{"n":1}', 'a plain value is left as it is');
  t.match(
    s.logs().find((l) => /sealed again/.test(l.msg ?? '')),
    { resealed: Number },
    'the boot says so',
  );
  await s.stop();

  s = await startService({ SERVICE_SECRET_KEY: newKey }, { dataDir: d, setup: false });
  t.same(await store(s).get('e2ee.device'), DEVICE, 'read with the new key alone');
});
