import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { JOB, runScheduledBackup } from '../../core/src/backup/scheduled.ts';
import { claimSlot } from '../../core/src/jobs/scheduler.ts';
import { startService } from '../helpers/service.ts';

t.test(
  'scheduled backups: off by default, then one per interval, oldest scheduled ones pruned, manual ones kept',
  async (t) => {
    const s = await startService();
    t.teardown(() => s.stop());
    const core = s.service.core;
    const a = s.admin.token;
    const dir = path.join(s.dataDir, 'backups');
    const files = () => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
    s.clock.set('2024-03-01T10:00:00.000Z');

    await core.jobs.runNow(JOB);
    t.same(files(), [], 'disabled by default: nothing written');

    const manual = (await s.request('POST', '/api/backup/files', { token: a })).body.filename;
    t.equal(
      (
        await s.request('PUT', '/api/backup/scheduled', {
          token: a,
          body: {
            backup_scheduled_enabled: 'true',
            backup_scheduled_interval_hours: '6',
            backup_retention_count: '2',
            backup_secrets_mode: 'include',
          },
        })
      ).status,
      200,
    );
    s.clock.set('2024-03-01T10:00:01.000Z');
    await core.jobs.runNow(JOB);
    const first = files().filter((f) => f !== manual);
    t.same(first, ['backup-20240301T100001000Z.json'], 'the first check writes one');
    const env = JSON.parse(fs.readFileSync(path.join(dir, first[0]!), 'utf8'));
    t.equal(env.trigger, 'scheduled');
    t.equal(env.secrets_mode, 'include', 'with backup_secrets_mode');

    s.clock.set('2024-03-01T15:59:00.000Z');
    t.equal(await runScheduledBackup(core), undefined, 'not before the interval has passed');
    s.clock.set('2024-03-01T16:00:01.000Z');
    t.equal(await runScheduledBackup(core), 'backup-20240301T160001000Z.json', 'after it has');
    s.clock.set('2024-03-01T22:30:00.000Z');
    t.equal(await runScheduledBackup(core), 'backup-20240301T223000000Z.json');
    t.same(
      files(),
      [manual, 'backup-20240301T160001000Z.json', 'backup-20240301T223000000Z.json'].sort(),
      'two scheduled kept (the oldest pruned), the manual one untouched',
    );
    t.ok(
      s.logs().some((l) => l.msg === 'scheduled backup written' && l.pruned?.[0] === 'backup-20240301T100001000Z.json'),
      'logged with what was pruned',
    );

    const list = (await s.request('GET', '/api/backup/files', { token: a })).body.files;
    t.equal(list.length, 3);

    // Another replica already claimed this slot: no second file.
    s.clock.set('2024-03-02T05:00:00.000Z');
    t.ok(
      await claimSlot(
        core.db,
        JOB,
        `6h:${Math.floor(Date.parse('2024-03-02T05:00:00.000Z') / 21_600_000)}`,
        'other-replica',
      ),
    );
    t.equal(await runScheduledBackup(core), undefined, 'one replica writes per slot');

    await s.request('PUT', '/api/backup/scheduled', { token: a, body: { backup_scheduled_enabled: 'false' } });
    s.clock.set('2024-03-05T00:00:00.000Z');
    t.equal(await runScheduledBackup(core), undefined, 'disabled again');
  },
);
