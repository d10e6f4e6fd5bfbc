/**
 * `herald backup stage` with files that do not validate: each refused with the very text the API's
 * prepare-restore answers for the same file (and the web client's Russian text for its code), exit
 * 1, nothing staged.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { exportNow, upload } from '../backup/support.ts';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

t.test("a file that does not validate: the API's text, exit 1, nothing staged", async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const env = await serviceEnv(s.dataDir);
  const admin = s.admin;
  const dataDir = s.dataDir;
  await s.request('POST', '/api/providers', {
    token: admin.token,
    body: { kind: 'example', name: 'Garden', config: { shared_token: 'shared-token-1' } },
  });
  const backup = await exportNow(s, 'include');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-bad-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const edited = structuredClone(backup);
  edited.configuration.providers[0].name = 'Edited by hand';
  const cases: [string, string | Buffer][] = [
    ['truncated.json', '{"format": "herald-config-backup", "configuration": {'],
    ['edited.json', JSON.stringify(edited)],
    ['not-a-backup.json', '{"hello": "world"}'],
    // One byte over the upload limit (refused at its size whatever it holds; not JSON, so quick to refuse).
    ['large.json', Buffer.alloc(20 * 1024 * 1024 + 1, 0x78)],
  ];
  for (const [name, content] of cases) {
    fs.writeFileSync(path.join(dir, name), content);
    const viaApi = await upload(s.url, admin.token, content);
    t.ok(viaApi.status >= 400 && viaApi.status < 500, `${name}: the API refuses it (${viaApi.status})`);
    const r = await herald(['backup', 'stage', path.join(dir, name)], env);
    t.equal(r.code, 1, `${name}: exit 1`);
    t.equal(r.stderr, `herald: ${viaApi.body.detail}\n`, `${name}: the API's text`);
  }
  const ru = await herald(['--lang', 'ru', 'backup', 'stage', path.join(dir, 'edited.json')], env);
  t.equal(
    ru.stderr,
    'herald: Контрольная сумма копии не совпадает: файл повреждён или изменён.\n',
    "the web client's Russian text",
  );
  const missing = await herald(['backup', 'stage', path.join(dir, 'nothing-here.json')], env);
  t.equal(missing.code, 1);
  t.equal(missing.stderr, `herald: cannot read ${path.join(dir, 'nothing-here.json')}: ENOENT\n`);
  t.notOk(fs.existsSync(path.join(dataDir, 'restore', 'pending.json')), 'nothing staged');
});
