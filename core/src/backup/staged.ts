/**
 * The staged restore: at most one pending file, `<dataDir>/restore/pending.json`.
 *
 *   none ──prepare-restore (valid)──▶ staged ──DELETE──▶ none
 *   staged ──apply-restart, supervised──▶ restarting ──next boot──▶ applied
 *     (pending → applied-<ts>.json)
 *   staged ──apply-restart, not supervised──▶ staged (409)
 *   next boot, apply fails ──▶ rolled back, pending → failed-<ts>.json, boot continues unchanged
 *
 * The boot step runs after the pre-migration snapshot and the migrations, before anything else
 * uses the database (see `applyStagedRestore`, called from app.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Core } from '../core.ts';
import { conflict, HttpError } from '../http/problem.ts';
import { redactText } from '../logging/redact.ts';
import { checkParsed } from './envelope.ts';
import { stamp } from './files.ts';
import { BACKUP_LIMITS, parseGuarded } from './json-guard.ts';
import { CONFLICT_MODES, type ConflictMode, type Summary } from './planner.ts';
import { applyRestore, totals } from './restore.ts';
import type { EnvelopeT } from './schema.ts';

export interface PendingRestore {
  state: 'staged';
  staged_at: string;
  staged_by: string;
  conflict_mode: ConflictMode;
  source: { filename: string; size_bytes: number; sha256: string };
  backup: {
    format_version: number;
    service_version: string;
    created_at: string;
    secrets_mode: string;
    migrated_from?: { service_version: string; format_version: number };
  };
  summary: Summary;
  envelope: EnvelopeT;
}

export const restoreDir = (core: Core): string => path.join(core.config.dataDir, 'restore');
export const pendingPath = (core: Core): string => path.join(restoreDir(core), 'pending.json');

/** The pending file wraps the envelope one level deeper and adds a little metadata. */
const PENDING_LIMITS = {
  ...BACKUP_LIMITS,
  maxDepth: BACKUP_LIMITS.maxDepth + 1,
  maxNodes: BACKUP_LIMITS.maxNodes + 10_000,
};

/** Reads a pending restore file (undefined when it does not exist). Throws when the file is damaged. */
export function readPending(core: Core, file = pendingPath(core)): PendingRestore | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const p = parseGuarded(text, PENDING_LIMITS) as PendingRestore;
  if (!p || typeof p !== 'object' || p.state !== 'staged' || !CONFLICT_MODES.includes(p.conflict_mode))
    throw new Error('the pending restore file is damaged');
  return p;
}

/** What the API shows of a pending restore: everything but the configuration itself (it may hold secrets). */
export function pendingView(p: PendingRestore) {
  const { envelope: _envelope, ...rest } = p;
  return rest;
}

/** Stages a restore (state none → staged). 409 when one is already staged. */
export function writePending(core: Core, p: PendingRestore): void {
  const dir = restoreDir(core);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.pending-${process.pid}-${Date.now()}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(p), { mode: 0o600 });
  try {
    // link() fails when pending.json exists, so two concurrent stagings cannot both win.
    fs.linkSync(tmp, pendingPath(core));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw conflict(
        'A restore is already staged; cancel it (DELETE /api/backup/pending-restore) before staging another.',
        'restore_already_staged',
      );
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Cancels the staged restore (staged → none). False when nothing was staged. */
export function cancelPending(core: Core): boolean {
  try {
    fs.rmSync(pendingPath(core));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Moves a claimed restore file aside as `<kind>-<timestamp>.json`; returns the new name. */
function archive(core: Core, from: string, kind: 'applied' | 'failed'): string | undefined {
  let at = core.clock.now();
  for (let i = 0; i < 1000; i++, at = new Date(at.getTime() + 1)) {
    const name = `${kind}-${stamp(at)}.json`;
    const target = path.join(restoreDir(core), name);
    if (fs.existsSync(target)) continue;
    try {
      fs.renameSync(from, target);
      return name;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Boot step: applies the staged restore, if any, in one transaction. The file is claimed first
 * (renamed to `applying-…`), so of several replicas booting on one data folder only one applies
 * it. On success it is archived as `applied-<ts>.json`; on failure the transaction rolls back, it
 * is moved to `failed-<ts>.json`, an error is logged and boot continues with the configuration untouched.
 */
export async function applyStagedRestore(core: Core): Promise<'none' | 'applied' | 'failed'> {
  const log = core.logs.get('backup');
  const dir = restoreDir(core);
  let leftovers: string[] = [];
  try {
    leftovers = fs.readdirSync(dir).filter((f) => /^applying-.*\.json$/.test(f));
  } catch {
    return 'none';
  }
  // A process that stopped in the middle of an earlier application left its claim behind.
  if (leftovers.length)
    log.warn(
      { files: leftovers },
      'an earlier restore was interrupted while it was applied (its transaction either committed or rolled ' +
        'back as a whole); the file is left for inspection',
    );
  const claimed = path.join(dir, `applying-${stamp(core.clock.now())}-${core.replicaId}.json`);
  try {
    fs.renameSync(pendingPath(core), claimed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'none';
    throw err;
  }
  try {
    const pending = readPending(core, claimed);
    if (!pending) return 'none';
    // Checked again: the file sat on disk, and this boot may run another version.
    const { envelope } = checkParsed(pending.envelope, core.version);
    const summary = await applyRestore(core, envelope, pending.conflict_mode);
    const archived = archive(core, claimed, 'applied');
    log.info(
      {
        archived,
        conflict_mode: pending.conflict_mode,
        totals: totals(summary),
        counts: summary.counts,
        skipped: summary.skipped,
        disabled: summary.disabled,
        backup_created_at: envelope.created_at,
      },
      'staged restore applied',
    );
    return 'applied';
  } catch (err) {
    const archived = archive(core, claimed, 'failed');
    const reason = redactText(err instanceof HttpError || err instanceof Error ? err.message : String(err));
    log.error(
      { archived, reason, code: (err as { code?: string }).code },
      'staged restore failed and was rolled back; the configuration is unchanged',
    );
    return 'failed';
  }
}
