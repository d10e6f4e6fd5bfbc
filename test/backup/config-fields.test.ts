/**
 * A backup whose provider, tracker or target configs carry fields their plugin does not declare
 * is refused (422, each field named by its place in the file), as the API refuses them; nothing
 * is staged. Backups the service writes never carry such fields.
 */

import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { checksumOf } from '../../core/src/backup/envelope.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';
import { configure, exportNow, upload } from './support.ts';

const LEAK = 'leaked-credential-value-0042';

t.test('undeclared config fields in a backup are refused, named one by one', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-webhook` });
  t.teardown(() => s.stop());
  const c = await configure(s);
  const hook = await s.request('POST', '/api/providers', {
    token: c.user.token,
    body: {
      kind: 'webhook',
      name: 'W',
      config: { mapping: { title: 'title', severity_map: { P1: 'critical' } }, secret: '0123456789abcdef' },
    },
  });
  t.equal(hook.status, 201, hook.text);
  const good = await exportNow(s, 'include');
  const before = good.configuration;
  const at = (list: any[], id: string) => list.findIndex((r) => r.id === id);
  const i = {
    provider: at(before.providers, c.provider.id),
    hook: at(before.providers, hook.body.id),
    tracker: at(before.trackers, c.tracker.id),
    target: at(before.targets, c.target.id),
  };

  for (const mode of ['include', 'exclude'] as const) {
    const e = await exportNow(s, mode);
    t.equal(
      (await upload(s.url, s.admin.token, JSON.stringify(e), 'conflict_mode=skip')).status,
      201,
      `a backup the service wrote (${mode}) restores`,
    );
    t.equal((await s.request('DELETE', '/api/backup/pending-restore', { token: s.admin.token })).status, 204);
  }

  const e = structuredClone(good);
  const cfg = e.configuration;
  cfg.providers[i.provider].config.webhook_token = LEAK;
  cfg.providers[i.hook].config.mapping.extra = LEAK;
  cfg.providers[i.hook].config.mapping.severity_map.P2 = 'warning';
  cfg.trackers[i.tracker].config.token = LEAK;
  cfg.targets[i.target].config.headers = { authorization: LEAK };
  e.checksum = checksumOf(cfg);
  for (const query of ['conflict_mode=overwrite', 'conflict_mode=skip']) {
    const r = await upload(s.url, s.admin.token, JSON.stringify(e), query);
    t.equal(r.status, 422, query);
    t.equal(r.body.code, 'invalid_backup');
    t.same(
      r.body.errors.map((x: any) => x.path).sort(),
      [
        `/configuration/providers/${i.provider}/config/webhook_token`,
        `/configuration/providers/${i.hook}/config/mapping/extra`,
        `/configuration/trackers/${i.tracker}/config/token`,
        `/configuration/targets/${i.target}/config/headers`,
      ].sort(),
      'every undeclared field, and nothing else (a map takes any key)',
    );
    t.ok(r.body.errors.every((x: any) => x.message === 'is not a field of this configuration'));
    t.match(r.body.detail, /config\/webhook_token is not a field of this configuration/);
    t.notOk(fs.existsSync(path.join(s.dataDir, 'restore', 'pending.json')), 'nothing staged');
  }
  t.same((await exportNow(s, 'include')).configuration, before, 'configuration untouched');
});
