import { spawnSync } from 'node:child_process';
import t from 'tap';
import { startService } from '../helpers/service.ts';

t.test('health, readiness and metrics', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const h = await s.request('GET', '/api/health');
  t.same(h.body, { status: 'ok', version: s.service.core.version });
  const r = await s.request('GET', '/api/ready');
  t.equal(r.status, 200);
  t.equal(r.body.ready, true);
  t.same(r.body.checks, { db: 'ok', scheduler: 'ok', start: 'ok', ha: 'na' });
  t.same(r.body.errors, []);
  t.type(r.body.version, 'string');

  const m = await s.request('GET', '/api/metrics');
  t.equal(m.status, 200);
  t.match(m.headers.get('content-type'), /text\/plain/);
  for (const [name, type] of [
    ['service_deferred_pending', 'gauge'],
    ['service_event_log_total', 'counter'],
    ['service_dispatch_duration_seconds', 'histogram'],
    ['service_provider_poll_failures_total', 'counter'],
    ['service_target_send_failures_total', 'counter'],
  ]) {
    t.match(m.text, new RegExp(`# TYPE ${name} ${type}`), `${name} is a ${type}`);
  }
  t.match(m.text, /process_cpu_user_seconds_total/);
  const check = spawnSync('promtool', ['check', 'metrics'], { input: m.text, encoding: 'utf8' });
  t.equal(check.error, undefined, 'promtool runs');
  t.equal(check.status, 0, `promtool check metrics passes: ${check.stdout}${check.stderr}`);
});

t.test('readiness fails when the scheduler is down; metrics absent when disabled', async (t) => {
  const s = await startService({ SERVICE_METRICS_ENABLED: 'false' });
  t.teardown(() => s.stop());
  t.equal((await s.request('GET', '/api/metrics')).status, 404);
  await s.service.core.jobs.stop();
  const r = await s.request('GET', '/api/ready');
  t.equal(r.status, 503);
  t.equal(r.body.ready, false);
  t.equal(r.body.checks.scheduler, 'fail');
  t.ok(r.body.errors.length > 0);
});

t.test('readiness waits for the whole start and fails once a stop begins', async (t) => {
  // The jobs start first, then each feature (the relay's dispatch, the assistant): a check in between must not pass.
  let between: { statusCode: number; json(): any } | undefined;
  const s = await startService(
    {},
    {
      beforeListen: (service) => {
        const start = service.core.jobs.start.bind(service.core.jobs);
        service.core.jobs.start = async () => {
          await start();
          between = await service.app.inject({ method: 'GET', url: '/api/ready' });
        };
      },
    },
  );
  t.teardown(() => s.stop());
  t.ok(between, 'readiness was asked between the jobs and the features');
  t.equal(between!.statusCode, 503, 'not ready while the features start');
  t.equal(between!.json().ready, false);
  t.equal(between!.json().checks.scheduler, 'ok', 'the scheduler itself runs already');
  t.equal(between!.json().checks.start, 'fail');
  t.match(between!.json().errors, [/^start: the service is still starting/]);
  const r = await s.request('GET', '/api/ready');
  t.equal(r.status, 200, 'ready once listen() has ended');
  t.equal(r.body.checks.start, 'ok');

  const held = Promise.withResolvers<void>();
  s.service.core.onShutdown(() => held.promise);
  const stopping = s.stop();
  const during = await s.service.app.inject({ method: 'GET', url: '/api/ready' });
  t.equal(during.statusCode, 503, 'not ready once the stop has begun');
  t.ok(during.json().errors.includes('start: the service is stopping'), 'the stop is named');
  held.resolve();
  await stopping;
});
