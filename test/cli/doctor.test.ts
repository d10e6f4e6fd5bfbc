/**
 * `herald doctor` beside a running service (its SQLite file, or its PostgreSQL database in the
 * second pass): a healthy instance passes (exit 0) with its target's server reached and the SMTP
 * listener's greeting read; a wrong secret key, a host the outbound policy refuses, a plugin that
 * fails to load and broken records each fail with their line and the fix (exit 1).
 */

import crypto from 'node:crypto';
import path from 'node:path';
import t from 'tap';
import { startService, startSink, TEST_PLUGINS } from '../helpers/service.ts';
import { freePort, herald, ROOT, serviceEnv } from './support.ts';

interface Check {
  group: string;
  id: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  message: string;
  fix?: string;
}
interface Report {
  ok: boolean;
  checks: Check[];
}

const BROKEN = path.join(ROOT, 'test/fixtures/external/broken-import');

t.test('doctor', async (t) => {
  const smtpPort = await freePort();
  const smtp = { SERVICE_SMTP_PORT: String(smtpPort), SERVICE_SMTP_HOST: '127.0.0.1' };
  const s = await startService(smtp);
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const env = await serviceEnv(s.dataDir, smtp);
  const sinkPort = new URL(sink.url).port;
  const a = s.admin.token;
  const make = async (body: object) => {
    const r = await s.request('POST', '/api/targets', { token: a, body });
    if (r.status !== 201) throw new Error(`target: ${r.status} ${r.text}`);
    return r.body as { id: string };
  };
  await make({
    kind: 'recorder',
    name: 'Sink',
    config: { url: sink.url, api_token: 'recorder-secret-1' },
    locale: 'en',
  });
  const run = async (extra: Record<string, string>, args: string[] = ['--json']) => {
    const r = await herald(['doctor', ...args], { ...env, ...extra });
    return { ...r, report: args.includes('--json') ? (JSON.parse(r.stdout) as Report) : undefined };
  };
  const byId = (r: Report, id: string) => r.checks.find((c) => c.id === id);

  t.test('a healthy instance: every check passes, exit 0', async (t) => {
    const r = await run({});
    t.equal(r.code, 0, r.stdout + r.stderr);
    const report = r.report!;
    t.equal(report.ok, true);
    t.same(
      report.checks.filter((c) => c.status === 'fail'),
      [],
      'no failure',
    );
    t.match(byId(report, 'secret_key'), { status: 'ok', message: "SERVICE_SECRET_KEY opens this database's secrets" });
    t.match(byId(report, 'migrations'), { status: 'ok' });
    t.match(byId(report, 'integrity'), { status: 'ok' });
    t.match(byId(report, 'data_dir'), { status: 'ok', message: `data folder ${s.dataDir} is writable` });
    for (const spec of TEST_PLUGINS.split(','))
      t.match(byId(report, `plugin:${spec}`), { status: 'ok' }, `${spec} loads`);
    t.match(byId(report, `outbound:127.0.0.1:${sinkPort}`), {
      status: 'ok',
      message: new RegExp(
        `^127\\.0\\.0\\.1:${sinkPort} \\(127\\.0\\.0\\.1\\) is reachable, for target "Sink" \\(recorder, ` +
          `${s.admin.email}\\)$`,
      ),
    });
    t.match(
      byId(report, 'smtp_listener'),
      { status: 'ok', message: new RegExp(`^127\\.0\\.0\\.1:${smtpPort} answers: 220 `) },
      "the service's SMTP listener greets",
    );
    t.match(byId(report, 'instances'), { status: 'ok' });
    t.notOk(r.stdout.includes('recorder-secret-1'), 'no secret is printed');

    const text = await run({}, []);
    t.equal(text.code, 0);
    t.match(text.stdout, /^Configuration\n {2}✓ SERVICE_\* variables read/);
    t.match(text.stdout, /\n {2}✓ SERVICE_SECRET_KEY opens this database's secrets\n/);
    t.match(text.stdout, /\n\d+ checks, no failure \(\d+ to look at\)\.\n$/);
  });

  t.test('a wrong secret key fails with the fix, exit 1 (in Russian from LANG)', async (t) => {
    const r = await run({ SERVICE_SECRET_KEY: crypto.randomBytes(32).toString('hex'), LANG: 'ru_RU.UTF-8' }, []);
    t.equal(r.code, 1);
    t.match(
      r.stdout,
      new RegExp(
        /\n {2}✗ SERVICE_SECRET_KEY не открывает секреты этой базы: сервис откажется запускаться → укажите /.source +
          /ключ, которым зашифрована база;/.source,
      ),
    );
    t.match(r.stdout, /\n1 проверка не прошла/);
  });

  t.test('a refused host, a plugin that fails to load and broken records fail, each with why; exit 1', async (t) => {
    // The same server for a second target whose own outbound allow list lets it through.
    const allowed = await make({ kind: 'recorder', name: 'Allowed', config: { url: sink.url }, locale: 'en' });
    const put = await s.request('PUT', `/api/admin/outbound-allow/target/${allowed.id}`, {
      token: a,
      body: { outbound_allow: ['127.0.0.1'] },
    });
    t.equal(put.status, 200, put.text);
    const broken = await make({
      kind: 'recorder',
      name: 'Broken',
      config: { url: 'http://127.0.0.1:9/' },
      locale: 'en',
    });
    await s.service.core.db.run(`UPDATE targets SET config = '{}' WHERE id = ?`, [broken.id]);
    const p = await s.request('POST', '/api/providers', {
      token: a,
      body: { kind: 'example', name: 'Failing source', config: { shared_token: 'shared-token-1' } },
    });
    t.equal(p.status, 201, p.text);
    await s.service.core.db.run(
      `UPDATE providers SET status = 'auth_failed', status_detail = 'the remote refused the token' WHERE id = ?`,
      [p.body.id],
    );

    const r = await run({ SERVICE_OUTBOUND_ALLOW_CIDRS: '', SERVICE_PLUGINS: `${TEST_PLUGINS},${BROKEN}` });
    t.equal(r.code, 1);
    const report = r.report!;
    t.equal(report.ok, false);
    t.match(byId(report, `outbound:127.0.0.1:${sinkPort}`), {
      status: 'fail',
      message: new RegExp(
        `^127\\.0\\.0\\.1:${sinkPort} is refused by the outbound policy, for target "Sink" \\(recorder, [^)]+\\): ` +
          `refused to connect to 127\\.0\\.0\\.1: 127\\.0\\.0\\.1 is `,
      ),
      fix: /SERVICE_OUTBOUND_ALLOW_CIDRS/,
    });
    t.match(
      byId(report, `outbound:127.0.0.1:${sinkPort}:127.0.0.1`),
      { status: 'ok', message: /is reachable, for target "Allowed"/ },
      "as the pinned client sees it: the instance's own allow list counts",
    );
    t.match(byId(report, `plugin:${BROKEN}`), {
      status: 'fail',
      message: new RegExp(
        /^Plugin package "herald-broken-import" \(.*\) is installed but failed to import: Cannot find /.source +
          /package 'herald-dependency-nobody-installed'/.source,
      ),
    });
    for (const spec of TEST_PLUGINS.split(','))
      t.match(byId(report, `plugin:${spec}`), { status: 'ok' }, `${spec} still loads`);
    t.match(byId(report, `target:${broken.id}`), {
      status: 'fail',
      message: /^target "Broken" \(recorder, [^)]+\): its configuration is invalid: \/url is required/,
    });
    t.match(byId(report, `provider:${p.body.id}`), {
      status: 'fail',
      message: /^provider "Failing source" \(example, [^)]+\) is in state auth_failed: the remote refused the token$/,
    });
    t.match(byId(report, 'instances'), { status: 'fail', message: /2 of the \d+ enabled have problems/ });
    t.match(byId(report, 'secret_key'), { status: 'ok' }, 'the rest still checked');

    const text = await run({ SERVICE_OUTBOUND_ALLOW_CIDRS: '' }, []);
    t.equal(text.code, 1);
    t.match(
      text.stdout,
      new RegExp(
        `\\n  ✗ 127\\.0\\.0\\.1:${sinkPort} is refused by the outbound policy, for target "Sink" .* → allow its ` +
          'range in SERVICE_OUTBOUND_ALLOW_CIDRS',
      ),
    );
  });
});
