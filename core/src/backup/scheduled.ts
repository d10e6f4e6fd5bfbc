/**
 * Scheduled backups. A job checks every 10 minutes: when `backup_scheduled_enabled` is "true" and
 * `backup_scheduled_interval_hours` have passed since the newest scheduled backup, it writes one
 * (with `backup_secrets_mode`) and prunes the oldest scheduled backups beyond
 * `backup_retention_count`. The slot is claimed first, so one replica writes per slot.
 */
import type { Core } from '../core.ts';
import { claimSlot, finishSlot } from '../jobs/scheduler.ts';
import { isScheduled, listBackups, pruneScheduled, writeBackup } from './files.ts';
import type { SecretsModeT } from './schema.ts';
import { BACKUP_SETTING_KEYS, type BackupSettingKey } from './settings-rules.ts';

export const JOB = 'backup-scheduled';
export const CHECK_EVERY_MS = 10 * 60_000;

/** The four backup settings as stored (or their defaults). */
export async function backupSettings(core: Core): Promise<Record<BackupSettingKey, string>> {
  const all = await core.settings.all();
  return Object.fromEntries(BACKUP_SETTING_KEYS.map((k) => [k, all[k]])) as Record<BackupSettingKey, string>;
}

/** Newest scheduled backup's time in ms, or undefined. */
function newestScheduled(core: Core): number | undefined {
  for (const f of listBackups(core)) if (isScheduled(core, f.filename)) return Date.parse(f.created_at);
  return undefined;
}

/** One check of the schedule; returns the file written, if any. */
export async function runScheduledBackup(core: Core): Promise<string | undefined> {
  const s = await backupSettings(core);
  if (s.backup_scheduled_enabled !== 'true') return undefined;
  const hours = Number(s.backup_scheduled_interval_hours);
  const intervalMs = (Number.isInteger(hours) && hours > 0 ? hours : 24) * 3_600_000;
  const now = core.clock.now().getTime();
  const last = newestScheduled(core);
  if (last !== undefined && now - last < intervalMs) return undefined;
  // Slots are interval-sized windows; two replicas checking in the same window agree on it.
  const slot = `${hours}h:${Math.floor(now / intervalMs)}`;
  if (!(await claimSlot(core.db, JOB, slot, core.replicaId))) return undefined;
  const log = core.logs.get('backup');
  try {
    const file = await writeBackup(core, s.backup_secrets_mode as SecretsModeT, 'scheduled');
    const keep = Number(s.backup_retention_count);
    const pruned = pruneScheduled(core, Number.isInteger(keep) && keep > 0 ? keep : 7);
    await finishSlot(core.db, JOB, slot, 'ok');
    log.info(
      { file: file.filename, size_bytes: file.size_bytes, secrets_mode: file.secrets_mode, pruned },
      'scheduled backup written',
    );
    return file.filename;
  } catch (err) {
    await finishSlot(core.db, JOB, slot, 'failed').catch(() => {});
    throw err;
  }
}

export function registerScheduledBackups(core: Core): void {
  core.jobs.register(JOB, {
    interval: CHECK_EVERY_MS,
    run: async () => {
      await runScheduledBackup(core);
    },
  });
}
