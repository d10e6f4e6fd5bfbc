/**
 * The assistant's model choice (`PUT /api/v1/admin/models`) in configuration backups: exported
 * from the settings rows, validated with the route's own limits, restored under the conflict
 * modes like the operator settings, and left alone by backups written before it travelled.
 */

import crypto from 'node:crypto';
import t from 'tap';
import { checksumOf } from '../../core/src/backup/envelope.ts';
import type { TestService } from '../helpers/service.ts';
import { exportNow, servicesWith, upload } from './support.ts';

const key = crypto.randomBytes(32).toString('hex');
const { boot, reboot } = servicesWith({ SERVICE_SECRET_KEY: key });

async function setModels(s: TestService, models_allowed: string[], default_model: string) {
  const r = await s.request('PUT', '/api/v1/admin/models', {
    token: s.admin.token,
    body: { models_allowed, default_model },
  });
  if (r.status !== 200) throw new Error(`PUT /api/v1/admin/models: ${r.status} ${r.text}`);
}

async function models(s: TestService): Promise<{ models_allowed: string[]; default_model: string }> {
  const r = await s.request('GET', '/api/v1/admin/models', { token: s.admin.token });
  if (r.status !== 200) throw new Error(`GET /api/v1/admin/models: ${r.status} ${r.text}`);
  return { models_allowed: r.body.models_allowed, default_model: r.body.default_model };
}

const pending = async (s: TestService) =>
  (await s.request('GET', '/api/backup/pending-restore', { token: s.admin.token })).status;

/** Re-signs an edited envelope so only the intended change remains. */
const signed = (e: any) => ({ ...e, checksum: checksumOf(e.configuration) });

t.test(
  'the model choice travels: set through the API, exported, restored into a fresh service, read back through the API',
  async (t) => {
    const src = await boot(t);
    t.teardown(() => src.stop());
    t.same(
      (await exportNow(src)).configuration.assistant_models,
      { models_allowed: [], default_model: null },
      'nothing chosen: an empty list and no default',
    );
    await setModels(src, [' m-large ', 'm-small', 'm-small', 'm-tiny'], 'm-small');
    const chosen = { models_allowed: ['m-large', 'm-small', 'm-tiny'], default_model: 'm-small' };
    t.same(await models(src), chosen, 'saved as the API normalises it');
    const backup = await exportNow(src, 'exclude');
    t.same(backup.configuration.assistant_models, chosen, 'in the default (exclude) backup');

    let dst = await boot(t);
    t.teardown(() => dst.stop());
    t.same(await models(dst), { models_allowed: [], default_model: '' }, 'the fresh service has no choice');
    const r = await upload(dst.url, dst.admin.token, JSON.stringify(backup), 'conflict_mode=skip');
    t.equal(r.status, 201, 'staged');
    t.same(
      r.body.summary.counts.assistant_models,
      { created: 1, replaced: 0, kept: 0, unchanged: 0 },
      'the plan shows the choice as new, not a conflict',
    );
    t.notOk(
      r.body.summary.conflicts.some((c: any) => c.table === 'assistant_models'),
      'no conflict',
    );
    t.same(await models(dst), { models_allowed: [], default_model: '' }, 'nothing changes before the restart');
    dst = await reboot(t, dst);
    t.equal(await pending(dst), 204, 'applied');
    t.same(await models(dst), chosen, 'GET /api/v1/admin/models reads the restored choice');
    const users = await dst.user();
    const pick = await dst.request('GET', '/api/v1/models', { token: users.token });
    t.same(
      pick.body,
      { models: [{ id: 'm-small' }, { id: 'm-large' }, { id: 'm-tiny' }], default: 'm-small' },
      'users see the restored models, the default first',
    );

    // The same choice again is unchanged: no conflict, so conflict_mode=fail takes it.
    const again = await upload(dst.url, dst.admin.token, JSON.stringify(backup), 'conflict_mode=fail');
    t.equal(again.status, 201);
    t.same(again.body.summary.counts.assistant_models, { created: 0, replaced: 0, kept: 0, unchanged: 1 });
    t.equal((await dst.request('DELETE', '/api/backup/pending-restore', { token: dst.admin.token })).status, 204);
  },
);

t.test(
  'a backup without the section (written before it travelled) validates and leaves the models as they are',
  async (t) => {
    const src = await boot(t);
    t.teardown(() => src.stop());
    await setModels(src, ['from-backup'], 'from-backup');
    const old = structuredClone(await exportNow(src, 'exclude'));
    delete old.configuration.assistant_models;
    // A field of the old format changed too, so the restore has something else to apply.
    old.configuration.settings.default_max_chats = '44';

    let s = await boot(t);
    t.teardown(() => s.stop());
    await setModels(s, ['keep-1', 'keep-2'], 'keep-2');
    const r = await upload(s.url, s.admin.token, JSON.stringify(signed(old)), 'conflict_mode=overwrite');
    t.equal(r.status, 201, 'staged with overwrite');
    t.equal(r.body.summary.counts.settings.created, 1, 'the changed setting is planned');
    t.notOk('assistant_models' in r.body.summary.counts, 'the plan has nothing for the models');
    t.notOk(
      r.body.summary.conflicts.some((c: any) => c.table === 'assistant_models'),
      'and no conflict',
    );
    s = await reboot(t, s);
    t.equal(await pending(s), 204, 'applied');
    t.equal(
      (await s.request('GET', '/api/v1/admin/settings', { token: s.admin.token })).body.default_max_chats,
      44,
      'the rest of the backup was restored',
    );
    t.same(
      await models(s),
      { models_allowed: ['keep-1', 'keep-2'], default_model: 'keep-2' },
      "the target's models are untouched",
    );
  },
);

t.test('a section the API would refuse is refused at upload (422) with the path', async (t) => {
  const s = await boot(t);
  t.teardown(() => s.stop());
  await setModels(s, ['here-1'], 'here-1');
  const good = await exportNow(s, 'include');
  const cases: { name: string; section: unknown; path: string; message: RegExp; api?: unknown }[] = [
    {
      name: 'a model id that is not a string',
      section: { models_allowed: ['ok', 42], default_model: null },
      path: '/configuration/assistant_models/models_allowed/1',
      message: /string/,
      api: { models_allowed: ['ok', 42], default_model: '' },
    },
    {
      name: 'a model id too long',
      section: { models_allowed: ['x'.repeat(201)], default_model: null },
      path: '/configuration/assistant_models/models_allowed/0',
      message: /200/,
      api: { models_allowed: ['x'.repeat(201)], default_model: '' },
    },
    {
      name: 'an empty model id',
      section: { models_allowed: [''], default_model: null },
      path: '/configuration/assistant_models/models_allowed/0',
      message: /1/,
      api: { models_allowed: [''], default_model: '' },
    },
    {
      name: 'too many models',
      section: { models_allowed: Array.from({ length: 101 }, (_, i) => `m-${i}`), default_model: null },
      path: '/configuration/assistant_models/models_allowed',
      message: /100/,
      api: { models_allowed: Array.from({ length: 101 }, (_, i) => `m-${i}`), default_model: '' },
    },
    {
      name: 'a default too long',
      section: { models_allowed: [], default_model: 'y'.repeat(201) },
      path: '/configuration/assistant_models/default_model',
      message: /200/,
      api: { models_allowed: [], default_model: 'y'.repeat(201) },
    },
    {
      name: 'a default outside the list',
      section: { models_allowed: ['a', 'b'], default_model: 'c' },
      path: '/configuration/assistant_models/default_model',
      message: /must be one of models_allowed/,
      api: { models_allowed: ['a', 'b'], default_model: 'c' },
    },
    {
      name: 'a field that does not belong',
      section: { models_allowed: [], default_model: null, extra: true },
      path: '/configuration/assistant_models',
      message: /extra/,
    },
    {
      name: 'a list that is not a list',
      section: { models_allowed: 'a,b', default_model: null },
      path: '/configuration/assistant_models/models_allowed',
      message: /array/,
    },
  ];
  for (const c of cases) {
    const e = structuredClone(good);
    e.configuration.assistant_models = c.section;
    const r = await upload(s.url, s.admin.token, JSON.stringify(signed(e)), 'conflict_mode=overwrite');
    t.equal(r.status, 422, `${c.name}: 422`);
    t.equal(r.body.code, 'invalid_backup', c.name);
    t.ok(r.body.detail.includes(c.path), `${c.name}: the detail names ${c.path} (${r.body.detail})`);
    t.ok(
      r.body.errors.some((x: any) => x.path === c.path && c.message.test(x.message)),
      `${c.name}: errors list ${c.path}`,
    );
    t.equal(await pending(s), 204, `${c.name}: nothing staged`);
    if (c.api)
      t.equal(
        (await s.request('PUT', '/api/v1/admin/models', { token: s.admin.token, body: c.api })).status,
        422,
        `${c.name}: the API refuses it too`,
      );
  }
  t.same(await models(s), { models_allowed: ['here-1'], default_model: 'here-1' }, 'the models are untouched');
  // What the API accepts and normalises, a backup may carry too.
  const loose = structuredClone(good);
  loose.configuration.assistant_models = {
    models_allowed: [' here-1 ', 'here-2', 'here-2', '  '],
    default_model: ' here-2 ',
  };
  const r = await upload(s.url, s.admin.token, JSON.stringify(signed(loose)), 'conflict_mode=overwrite');
  t.equal(r.status, 201, 'ids with spaces around are taken, as the API takes them');
  t.same(r.body.summary.counts.assistant_models, { created: 0, replaced: 1, kept: 0, unchanged: 0 });
  t.equal((await s.request('DELETE', '/api/backup/pending-restore', { token: s.admin.token })).status, 204);
});

t.test('conflict modes: fail refuses, skip keeps, overwrite replaces', async (t) => {
  let s = await boot(t);
  t.teardown(() => s.stop());
  await setModels(s, ['a-1', 'a-2'], 'a-1');
  const backup = JSON.stringify(await exportNow(s, 'include'));
  const changed = { models_allowed: ['b-1'], default_model: 'b-1' };
  await setModels(s, changed.models_allowed, changed.default_model);

  const failed = await upload(s.url, s.admin.token, backup, 'conflict_mode=fail');
  t.equal(failed.status, 409, 'fail: 409');
  t.equal(failed.body.code, 'restore_conflict');
  t.match(failed.body.detail, /assistant_models 1: an existing record differs in models_allowed, default_model/);
  t.match(failed.body.errors, [
    { path: '/configuration/assistant_models/1', message: /models_allowed, default_model/ },
  ]);
  t.equal(await pending(s), 204, 'nothing staged');

  const skipped = await upload(s.url, s.admin.token, backup, 'conflict_mode=skip');
  t.equal(skipped.status, 201, 'skip: staged');
  t.same(skipped.body.summary.counts.assistant_models, { created: 0, replaced: 0, kept: 1, unchanged: 0 });
  t.match(skipped.body.summary.conflicts, [
    { table: 'assistant_models', id: '1', reason: /differs in models_allowed, default_model/ },
  ]);
  s = await reboot(t, s);
  t.equal(await pending(s), 204, 'applied');
  t.same(await models(s), changed, 'skip kept the models set here');

  const overwritten = await upload(s.url, s.admin.token, backup, 'conflict_mode=overwrite');
  t.equal(overwritten.status, 201, 'overwrite: staged');
  t.same(overwritten.body.summary.counts.assistant_models, { created: 0, replaced: 1, kept: 0, unchanged: 0 });
  s = await reboot(t, s);
  t.equal(await pending(s), 204, 'applied');
  t.same(
    await models(s),
    { models_allowed: ['a-1', 'a-2'], default_model: 'a-1' },
    "overwrite restored the backup's models",
  );

  // Only the default differs: the record is still one conflict, and the list comes back with it.
  await setModels(s, ['a-1', 'a-2'], 'a-2');
  const one = await upload(s.url, s.admin.token, backup, 'conflict_mode=fail');
  t.equal(one.status, 409);
  t.match(one.body.errors, [{ path: '/configuration/assistant_models/1', message: /differs in default_model$/ }]);
  // A choice cleared here (an empty list, AI_MODEL as default) differs from the backup's too.
  await setModels(s, [], '');
  const cleared = await upload(s.url, s.admin.token, backup, 'conflict_mode=skip');
  t.equal(cleared.status, 201);
  t.same(
    cleared.body.summary.counts.assistant_models,
    { created: 0, replaced: 0, kept: 1, unchanged: 0 },
    'a cleared choice is a stored one: kept under skip',
  );
  t.equal((await s.request('DELETE', '/api/backup/pending-restore', { token: s.admin.token })).status, 204);
});
