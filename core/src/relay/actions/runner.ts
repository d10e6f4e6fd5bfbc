import type { Core } from '../../core.ts';
import { Database } from '../../db/database.ts';
import { claimSlot } from '../../jobs/scheduler.ts';
import { type ActionDbRow, storedActionConfig } from '../definitions/action.ts';
import type { EventDbRow } from '../definitions/event.ts';
import type { TrackerDbRow } from '../definitions/tracker.ts';
import type { Relay } from '../pipeline/relay.ts';
import { cronOf } from '../routes/schedule.ts';
import { render } from '../templates/engine.ts';
import { runAiDigest } from './ai-digest.ts';

/** Next run of a cron schedule after `from`, in the action's zone (the same cron the schedule preview uses). */
export function nextRun(schedule: string, timezone: string, from: Date): Date | null {
  const cron = cronOf(schedule, timezone);
  try {
    return cron.nextRun(from);
  } finally {
    cron.stop();
  }
}

/**
 * Runs one action now: a digest of a tracker's events since the last run, the model's summary of the owner's events
 * (ai-digest.ts), or a fixed message.
 */
export async function runAction(core: Core, relay: Relay, actionId: string): Promise<void> {
  const a = await core.db.get<ActionDbRow>('SELECT * FROM actions WHERE id = ?', [actionId]);
  if (!a) return;
  const now = core.clock.now();
  const config = storedActionConfig(a);
  let status = 'ok';
  let error: string | null = null;
  // Dates and event titles in the owner's language and the action's zone ({{date}}, a digest's times).
  const owner = await core.db.get<{ locale: string }>('SELECT locale FROM users WHERE id = ?', [a.user_id]);
  const lang = owner?.locale === 'ru' ? 'ru' : 'en';
  const when = (at: string | Date, o: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' }) =>
    new Intl.DateTimeFormat(lang === 'ru' ? 'ru-RU' : 'en-GB', { ...o, timeZone: a.timezone || 'UTC' }).format(
      new Date(at),
    );
  try {
    if (a.kind === 'digest') {
      const tracker = await core.db.get<TrackerDbRow>('SELECT * FROM trackers WHERE id = ? AND user_id = ?', [
        config.tracker_id,
        a.user_id,
      ]);
      if (!tracker) throw new Error('the tracker of this digest no longer exists');
      const since = a.last_run_at ?? a.created_at;
      const events = await core.db.all<Pick<EventDbRow, 'id' | 'event_type' | 'occurred_at' | 'payload'>>(
        'SELECT id, event_type, occurred_at, payload FROM event_log WHERE provider_id = ? AND created_at > ' +
          '? AND created_at <= ? ORDER BY id LIMIT 100',
        [tracker.provider_id, since, now.toISOString()],
      );
      const targets = (
        await core.db.all<{ target_id: string }>('SELECT target_id FROM tracker_targets WHERE tracker_id = ?', [
          tracker.id,
        ])
      ).map((r) => r.target_id);
      if (!targets.length) throw new Error('the tracker of this digest has no linked targets');
      const list = events.map((e) => {
        const p = Database.json<Record<string, unknown>>(e.payload, {});
        const tpl = relay.catalog.get(e.event_type, lang);
        return {
          occurred_at: when(e.occurred_at),
          event_type: e.event_type,
          summary: render(tpl.title, { ...p, event_type: e.event_type }, 'text'),
        };
      });
      await relay.emitDirect(
        a.user_id,
        'action_digest',
        { tracker_name: tracker.name, since: when(since), events: list, action_name: a.name },
        targets,
      );
    } else if (a.kind === 'ai_digest') {
      await runAiDigest(core, a, config, now);
    } else {
      const targetIds = config.target_ids ?? [];
      const owned = (
        await core.db.all<{ id: string }>(
          `SELECT id FROM targets WHERE user_id = ? AND id IN (${targetIds.map(() => '?').join(',') || "''"})`,
          [a.user_id, ...targetIds],
        )
      ).map((r) => r.id);
      if (!owned.length) throw new Error('none of the targets of this action exists any more');
      const ctx = { action_name: a.name, now: now.toISOString(), date: when(now, { dateStyle: 'long' }) };
      await relay.emitDirect(
        a.user_id,
        'action_message',
        {
          title: render(config.title ?? a.name, ctx, 'text'),
          body: render(config.body ?? '', ctx, 'text'),
        },
        owned,
      );
    }
  } catch (err) {
    status = 'error';
    error = (err as Error).message;
  }
  const next = nextRun(a.schedule, a.timezone, now);
  await core.db.run(
    'UPDATE actions SET last_run_at = ?, last_status = ?, last_error = ?, next_run_at = ?, updated_at = ? WHERE id = ?',
    [now.toISOString(), status, error, next?.toISOString() ?? null, now.toISOString(), a.id],
  );
}

/** The scheduler's pass: every enabled action whose time came runs once per slot, whichever replica claims it. */
export async function runDueActions(core: Core, relay: Relay): Promise<void> {
  const now = core.clock.now().toISOString();
  const due = await core.db.all<{ id: string; next_run_at: string }>(
    'SELECT id, next_run_at FROM actions WHERE enabled = ? AND next_run_at IS NOT NULL AND next_run_at <= ' +
      '? ORDER BY next_run_at',
    [true, now],
  );
  for (const a of due) {
    if (await claimSlot(core.db, `action:${a.id}`, a.next_run_at, core.replicaId)) {
      await runAction(core, relay, a.id);
      continue;
    }
    // Someone else claimed this slot. If that replica died before moving next_run_at on, nothing
    // else would: move it on here (compare-and-set on the claimed slot), so the slot is skipped
    // rather than run twice and the action is not stuck. A live claimer later writes the same value.
    const row = await core.db.get<{ schedule: string; timezone: string }>(
      'SELECT schedule, timezone FROM actions WHERE id = ?',
      [a.id],
    );
    const next = row ? nextRun(row.schedule, row.timezone, core.clock.now()) : null;
    if (next)
      await core.db.run('UPDATE actions SET next_run_at = ? WHERE id = ? AND next_run_at = ?', [
        next.toISOString(),
        a.id,
        a.next_run_at,
      ]);
  }
}
