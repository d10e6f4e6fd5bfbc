import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import t from 'tap';
import { ConfigurationError, loadConfig } from '../../core/src/config/config.ts';

const KEY = 'f3a9c1d27be84e06a5d4c3b2a1908f7e6d5c4b3a29180f7e';
const base = { SERVICE_SECRET_KEY: KEY, SERVICE_DATA_DIR: '/tmp/herald-config-test' };

t.test('defaults of the specification', async (t) => {
  const c = loadConfig(base);
  t.equal(c.eventLogRetentionDays, 30);
  t.equal(c.preMigrateSnapshotKeep, 5);
  t.equal(c.metricsEnabled, true);
  t.equal(c.gracefulShutdownSeconds, 60);
  t.equal(c.logFormat, 'text');
  t.equal(c.logLevel, 'info');
  t.same(c.forwardedAllowIps, ['127.0.0.1']);
  t.equal(c.debug, false);
  t.equal(c.dialect, 'sqlite');
  t.match(c.databaseUrl, /herald\.db$/);
  t.equal(c.port, 8080);
  t.equal(loadConfig({ SERVICE_SECRET_KEY: KEY }).dataDir, '/data');
  t.same(loadConfig({ ...base, SERVICE_LOG_LEVELS: 'db=DEBUG,relay=WARNING' }).logLevels, {
    db: 'debug',
    relay: 'warn',
  });
});

t.test('refusals', async (t) => {
  const refuse = (env: Record<string, string | undefined>, re: RegExp) =>
    t.throws(() => loadConfig(env as NodeJS.ProcessEnv), { constructor: ConfigurationError, message: re }, String(re));
  refuse({}, /SERVICE_SECRET_KEY is required/);
  refuse({ SERVICE_SECRET_KEY: 'short' }, /at least 32 bytes/);
  refuse({ SERVICE_SECRET_KEY: 'changeme-changeme-changeme-changeme' }, /placeholder|development/);
  refuse({ SERVICE_SECRET_KEY: 'herald-development-secret-key-not-for-production' }, /development|placeholder/);
  refuse({ SERVICE_SECRET_KEY: 'a'.repeat(40) }, /placeholder|variety/);
  refuse({ ...base, SERVICE_CORS_ALLOWED_ORIGINS: 'https://a.example, *' }, /must not contain "\*"/);
  refuse({ ...base, SERVICE_PORT: 'eighty' }, /SERVICE_PORT/);
  refuse({ ...base, SERVICE_EVENT_LOG_RETENTION_DAYS: '-1' }, /SERVICE_EVENT_LOG_RETENTION_DAYS/);
  refuse({ ...base, SERVICE_DEBUG: 'maybe' }, /SERVICE_DEBUG/);
  refuse({ ...base, SERVICE_LOG_FORMAT: 'xml' }, /SERVICE_LOG_FORMAT/);
  refuse({ ...base, SERVICE_LOG_LEVEL: 'LOUD' }, /SERVICE_LOG_LEVEL/);
  refuse({ ...base, SERVICE_FORWARDED_ALLOW_IPS: 'not-an-ip' }, /SERVICE_FORWARDED_ALLOW_IPS/);
  refuse({ ...base, SERVICE_DATABASE_URL: 'mysql://x' }, /SERVICE_DATABASE_URL/);
  refuse({ ...base, SERVICE_MESSAGING_WEBHOOK_SECRET: 'has spaces and is long' }, /SERVICE_MESSAGING_WEBHOOK_SECRET/);
});

t.test('every secret key value shown in the README is refused', async (t) => {
  const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const shown = [...readme.matchAll(/SERVICE_SECRET_KEY=("?)([^\s"$`]+)\1/g)]
    .map((m) => m[2]!)
    .filter((v) => !v.startsWith('$('));
  t.ok(shown.length > 0, 'the README shows secret key examples');
  for (const v of shown)
    t.throws(
      () => loadConfig({ SERVICE_SECRET_KEY: v }),
      { constructor: ConfigurationError, message: /./ },
      `README value ${v} refused`,
    );
});

t.test('npm start refuses to boot with a one-line reason and a non-zero exit', async (t) => {
  const r = spawnSync(process.execPath, ['core/src/main.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, SERVICE_SECRET_KEY: 'tooshort' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(r.status, 1);
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !/ExperimentalWarning|--trace-warnings/.test(l));
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /refusing to start: SERVICE_SECRET_KEY must be at least 32 bytes/);
  const cors = spawnSync(process.execPath, ['core/src/main.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, SERVICE_SECRET_KEY: KEY, SERVICE_CORS_ALLOWED_ORIGINS: '*' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(cors.status, 1);
  t.match(cors.stderr, /CORS/);
});

t.test(
  'SERVICE_QUOTA_TIMEZONE: UTC (the default, taken without Intl) and IANA zones; anything else refused',
  async (t) => {
    t.equal(loadConfig(base).quotaTimezone, 'UTC');
    t.equal(loadConfig({ ...base, SERVICE_QUOTA_TIMEZONE: 'UTC' }).quotaTimezone, 'UTC');
    t.equal(loadConfig({ ...base, SERVICE_QUOTA_TIMEZONE: 'Europe/Berlin' }).quotaTimezone, 'Europe/Berlin');
    for (const zone of ['Mars/Olympus_Mons', 'UTC+3', 'utc ', 'Europe/']) {
      t.throws(
        () => loadConfig({ ...base, SERVICE_QUOTA_TIMEZONE: zone }),
        { constructor: ConfigurationError, message: `SERVICE_QUOTA_TIMEZONE "${zone}" is not an IANA time zone` },
        zone,
      );
    }
  },
);
