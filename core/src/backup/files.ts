/**
 * Stored config backups under `<dataDir>/backups/`: `backup-<YYYYMMDDTHHMMSSmmmZ>.json`, owner-only
 * (they may hold secrets). Only names matching that shape and present in the listing are ever
 * opened, so a request can never name another file.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Core } from '../core.ts';
import { buildEnvelope } from './envelope.ts';
import { collectConfiguration } from './export.ts';
import type { ConfigurationT, EnvelopeT, SecretsModeT } from './schema.ts';

export const BACKUP_NAME = /^backup-\d{8}T\d{6}\d{3}Z\.json$/;

export interface BackupFile {
  filename: string;
  size_bytes: number;
  created_at: string;
}

/** `20240131T235959123Z`: a sortable UTC stamp with milliseconds, safe in file names. */
export function stamp(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})Z$/, '$1Z');
}

/** The time a stamp stands for. */
export function fromStamp(s: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(s)!;
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`;
}

export const backupsDir = (core: Core): string => path.join(core.config.dataDir, 'backups');

/**
 * Removes records whose parents are missing (a record created while the export was reading), so every backup restores.
 */
function dropOrphans(c: ConfigurationT): void {
  const users = new Set(c.users.map((u) => u.id));
  const own = <T extends { user_id: string }>(l: T[]) => l.filter((r) => users.has(r.user_id));
  c.providers = own(c.providers);
  const providers = new Set(c.providers.map((p) => p.id));
  c.trackers = own(c.trackers).filter((t) => providers.has(t.provider_id));
  c.bots = own(c.bots);
  const bots = new Set(c.bots.map((b) => b.id));
  c.targets = own(c.targets).filter((t) => typeof t.config.bot_id !== 'string' || bots.has(t.config.bot_id));
  const trackers = new Set(c.trackers.map((t) => t.id));
  const targets = new Set(c.targets.map((t) => t.id));
  c.tracker_targets = own(c.tracker_targets).filter((l) => trackers.has(l.tracker_id) && targets.has(l.target_id));
  c.bot_chats = own(c.bot_chats).filter((ch) => bots.has(ch.bot_id));
  c.actions = own(c.actions).filter((a) =>
    a.kind === 'digest'
      ? trackers.has(a.config.tracker_id as string)
      : ((a.config.target_ids as string[]) ?? []).every((id) => targets.has(id)),
  );
  c.templates = own(c.templates);
  c.personal_contexts = own(c.personal_contexts);
  c.skills = c.skills.filter((s) => s.owner_id === null || users.has(s.owner_id));
  if (c.primary_context?.updated_by && !users.has(c.primary_context.updated_by)) c.primary_context.updated_by = null;
}

/** A fresh envelope of the current configuration. */
export async function exportEnvelope(
  core: Core,
  mode: SecretsModeT,
  trigger: 'manual' | 'scheduled',
  at = core.clock.now(),
): Promise<EnvelopeT> {
  const configuration = await collectConfiguration(core, mode);
  dropOrphans(configuration);
  return buildEnvelope(configuration, { serviceVersion: core.version, createdAt: at, secretsMode: mode, trigger });
}

/** Writes a backup file (never overwriting one) and describes it. */
export async function writeBackup(
  core: Core,
  mode: SecretsModeT,
  trigger: 'manual' | 'scheduled',
): Promise<BackupFile & { secrets_mode: SecretsModeT }> {
  const dir = backupsDir(core);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let at = core.clock.now();
  const text = `${JSON.stringify(await exportEnvelope(core, mode, trigger, at), null, 2)}\n`;
  for (;;) {
    const filename = `backup-${stamp(at)}.json`;
    try {
      fs.writeFileSync(path.join(dir, filename), text, { flag: 'wx', mode: 0o600 });
      return { filename, size_bytes: Buffer.byteLength(text), created_at: at.toISOString(), secrets_mode: mode };
    } catch (err) {
      // Two backups in the same millisecond: the second takes the next one.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      at = new Date(at.getTime() + 1);
    }
  }
}

/** Stored backups, newest first. */
export function listBackups(core: Core): BackupFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(backupsDir(core));
  } catch {
    return [];
  }
  return names
    .filter((n) => BACKUP_NAME.test(n))
    .sort()
    .reverse()
    .flatMap((filename) => {
      try {
        const st = fs.statSync(path.join(backupsDir(core), filename));
        return st.isFile() ? [{ filename, size_bytes: st.size, created_at: fromStamp(filename.slice(7, -5)) }] : [];
      } catch {
        return [];
      }
    });
}

/** The path of a stored backup, or undefined when `name` is not one (wrong shape or not in the listing). */
export function storedBackupPath(core: Core, name: string): string | undefined {
  if (!BACKUP_NAME.test(name)) return undefined;
  if (!listBackups(core).some((f) => f.filename === name)) return undefined;
  return path.join(backupsDir(core), name);
}

/** Whether a stored backup was written by the scheduled job (its header says so; only the first bytes are read). */
export function isScheduled(core: Core, filename: string): boolean {
  const fd = fs.openSync(path.join(backupsDir(core), filename), 'r');
  try {
    const buf = Buffer.alloc(512);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return /"trigger":\s*"scheduled"/.test(buf.subarray(0, n).toString('utf8'));
  } finally {
    fs.closeSync(fd);
  }
}

/** Deletes the oldest scheduled backups beyond `keep`; manual backups are never pruned. Returns the deleted names. */
export function pruneScheduled(core: Core, keep: number): string[] {
  const scheduled = listBackups(core).filter((f) => isScheduled(core, f.filename));
  const gone = scheduled.slice(Math.max(0, keep));
  for (const f of gone) fs.rmSync(path.join(backupsDir(core), f.filename), { force: true });
  return gone.map((f) => f.filename);
}
