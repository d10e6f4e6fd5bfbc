/**
 * Restore: sanitize the backup's configuration, plan it against the current records, refuse what
 * the conflict mode cannot apply, and apply the plan in one transaction. A restore adds and
 * replaces records; it never deletes records the backup does not mention.
 */
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { planAssistant, planAssistantModels, planSettings, planUsers } from './plan-core.ts';
import { planActionsAndTemplates, planBots, planProviders, planTargets, planTrackers } from './plan-relay.ts';
import { assertApplicable, type ConflictMode, Planner, type Summary } from './planner.ts';
import { sanitizeConfiguration } from './sanitize.ts';
import type { EnvelopeT } from './schema.ts';
import { openBackupSecrets } from './sealed.ts';

/**
 * Plans a restore against `q` (reads only). Throws 422 for a backup this service cannot take, 409
 * when the conflict mode refuses (or no administrator would be left).
 */
export async function planRestore(
  core: Core,
  envelope: EnvelopeT,
  mode: ConflictMode,
  q: Queryable = core.db,
): Promise<Planner> {
  // Validation and matching work on clear values; the planner seals them again as it writes.
  const sanitized = sanitizeConfiguration(core, openBackupSecrets(core, envelope.configuration));
  const c = sanitized.config;
  const p = new Planner(core, q, mode, core.clock.now());
  p.summary.skipped.push(...sanitized.skipped);
  p.summary.warnings.push(...sanitized.warnings);
  // Parents before children, so ids mapped by a unique key carry over to what references them.
  await planUsers(p, c.users);
  await planSettings(p, c.settings);
  await planAssistantModels(p, c.assistant_models);
  await planAssistant(p, c);
  await planProviders(p, c);
  await planTrackers(p, c);
  await planBots(p, c);
  await planTargets(p, c);
  await planActionsAndTemplates(p, c);
  assertApplicable(p.summary, mode);
  return p;
}

/** Plans and applies in one transaction: everything or nothing. Returns what was done. */
export async function applyRestore(core: Core, envelope: EnvelopeT, mode: ConflictMode): Promise<Summary> {
  return core.db.tx(async (q) => {
    const p = await planRestore(core, envelope, mode, q);
    for (const step of p.steps) await step(q);
    return p.summary;
  });
}

/** Totals over all tables, for logs and short answers. */
export function totals(s: Summary): {
  created: number;
  replaced: number;
  kept: number;
  unchanged: number;
  skipped: number;
  disabled: number;
} {
  const t = { created: 0, replaced: 0, kept: 0, unchanged: 0, skipped: s.skipped.length, disabled: s.disabled.length };
  for (const c of Object.values(s.counts)) {
    t.created += c.created;
    t.replaced += c.replaced;
    t.kept += c.kept;
    t.unchanged += c.unchanged;
  }
  return t;
}
