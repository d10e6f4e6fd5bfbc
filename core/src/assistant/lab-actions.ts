/**
 * What the assistant may do in the relay with the user's consent: send a notification to the
 * user's own targets now (`send_notification`), or schedule a message (`schedule_message`, a
 * scheduled action of kind `message`). A proposal is checked when the model makes it (so the
 * model hears at once what is wrong) and again when the user approves it (a target may have gone
 * meanwhile); only the caller's own targets are ever used.
 */
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { HttpError } from '../http/problem.ts';
import { emitOwn } from '../relay/actions/emit.ts';
import { type ActionInput, insertAction, validateAction } from '../relay/routes/actions.ts';
import { validTimeZone } from '../relay/routes/common.ts';
import { checkSchedule, nextRuns } from '../relay/routes/schedule.ts';
import { ToolInputError } from './event-search.ts';
import { type Lang, langOf } from './lab-strings.ts';

export const SEND_NOTIFICATION = 'send_notification';
export const SCHEDULE_MESSAGE = 'schedule_message';
/** The tools that act, each only after the user confirmed the call. */
export const CONSENT_TOOLS: ReadonlySet<string> = new Set([SEND_NOTIFICATION, SCHEDULE_MESSAGE]);

/** The event type and source of a notification the assistant sent. */
export const ASSISTANT_MESSAGE = 'assistant_message';
export const ASSISTANT_SOURCE = 'assistant';

export const MAX_TARGETS = 20;
const TITLE_MAX = 200;
const TEXT_MAX = 4000;

export interface TargetRef {
  id: string;
  name: string;
  kind: string;
  locale: Lang;
}

/** The columns of a `targets` row a TargetRef is read from. */
type TargetRefRow = { id: string; name: string; kind: string; locale: string | null };

/** The caller's enabled targets, by name (for the tool descriptions), at most `limit`. */
export async function ownTargets(db: Queryable, userId: string, limit = 50): Promise<TargetRef[]> {
  const rows = await db.all<TargetRefRow>(
    'SELECT id, name, kind, locale FROM targets WHERE user_id = ? AND enabled = ? ORDER BY name, id LIMIT ?',
    [userId, true, limit],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, kind: r.kind, locale: langOf(r.locale) }));
}

/**
 * Targets named by id or by name (case-insensitive), each one of the caller's enabled targets;
 * a ToolInputError naming those that are not.
 */
export async function resolveTargets(db: Queryable, userId: string, refs: unknown): Promise<TargetRef[]> {
  const list = (Array.isArray(refs) ? refs : typeof refs === 'string' ? [refs] : [])
    .map((x) => String(x ?? '').trim())
    .filter(Boolean);
  if (!list.length) throw new ToolInputError('Name at least one target (by name or id).');
  if (list.length > MAX_TARGETS) throw new ToolInputError(`At most ${MAX_TARGETS} targets.`);
  const rows = await db.all<TargetRefRow>(
    'SELECT id, name, kind, locale FROM targets WHERE user_id = ? AND enabled = ?',
    [userId, true],
  );
  const out: TargetRef[] = [];
  const unknown: string[] = [];
  for (const ref of list) {
    const r = rows.find((x) => x.id === ref) ?? rows.find((x) => String(x.name).toLowerCase() === ref.toLowerCase());
    if (!r) {
      unknown.push(ref);
      continue;
    }
    if (!out.some((t) => t.id === r.id)) out.push({ id: r.id, name: r.name, kind: r.kind, locale: langOf(r.locale) });
  }
  if (unknown.length) {
    throw new ToolInputError(
      `Not one of the user's enabled targets: ${unknown.map((u) => `"${u.slice(0, 80)}"`).join(', ')}. Use ` +
        `a name or id from the list in the tool's description.`,
    );
  }
  return out;
}

const text = (v: unknown, what: string, max: number, required = true): string => {
  const s = typeof v === 'string' ? v.trim() : '';
  if (!s && required) throw new ToolInputError(`Give the ${what}.`);
  if (s.length > max) throw new ToolInputError(`The ${what} is longer than ${max} characters.`);
  return s;
};

/**
 * The notification the model proposed: its targets and its title and text per language. A type alias rather than an
 * interface, so that it is a JSON record (`Record<string, unknown>`) where a proposal is stored and shown.
 */
export type NotificationProposal = {
  targets: TargetRef[];
  messages: Record<Lang, { title: string; text: string }>;
};

export async function proposeNotification(
  db: Queryable,
  userId: string,
  userLocale: string,
  args: Record<string, unknown>,
): Promise<NotificationProposal> {
  const targets = await resolveTargets(db, userId, args.targets);
  const base = { title: text(args.title, 'title', TITLE_MAX), text: text(args.text, 'text', TEXT_MAX) };
  const own = langOf(userLocale);
  const messages = { en: base, ru: base } as Record<Lang, { title: string; text: string }>;
  const tr =
    args.translations && typeof args.translations === 'object' ? (args.translations as Record<string, unknown>) : {};
  for (const l of ['en', 'ru'] as const) {
    if (l === own) continue;
    const t = tr[l] as Record<string, unknown> | undefined;
    if (t && typeof t === 'object' && (t.title || t.text)) {
      messages[l] = {
        title: text(t.title ?? base.title, `${l} title`, TITLE_MAX),
        text: text(t.text ?? base.text, `${l} text`, TEXT_MAX),
      };
    }
  }
  return { targets, messages };
}

/** The scheduled message the model proposed, checked as the actions page checks one (a type alias: see above). */
export type ScheduleProposal = {
  name: string;
  schedule: string;
  timezone: string;
  targets: TargetRef[];
  title: string;
  body: string;
  next_runs: string[];
};

export async function proposeSchedule(
  db: Queryable,
  userId: string,
  now: Date,
  args: Record<string, unknown>,
): Promise<ScheduleProposal> {
  const targets = await resolveTargets(db, userId, args.targets);
  const title = text(args.title, 'title', TITLE_MAX);
  const body = text(args.body ?? args.text, 'text', TEXT_MAX);
  const name = text(args.name, 'name', 200, false) || title;
  const schedule = text(args.schedule, 'schedule', 120);
  const timezone = text(args.timezone, 'timezone', 64, false) || 'UTC';
  if (!validTimeZone(timezone))
    throw new ToolInputError(`timezone "${timezone}" is not an IANA time zone (for example Europe/Berlin or UTC).`);
  const check = checkSchedule(schedule, timezone, now);
  if (!check.ok) throw new ToolInputError(`The ${check.problem}.`);
  return {
    name,
    schedule,
    timezone,
    targets,
    title,
    body,
    next_runs: nextRuns(schedule, timezone, now, 3).map((d) => d.toISOString()),
  };
}

/**
 * Carries out an approved proposal for `userId`. Returns what the model reads back; throws a
 * ToolInputError when it can no longer be done (a target was deleted, the schedule is refused).
 */
export async function carryOut(
  core: Core,
  userId: string,
  name: string,
  /** The proposal as proposeNotification or proposeSchedule made it, read back from its JSON. */
  proposal: unknown,
): Promise<Record<string, unknown>> {
  if (name === SEND_NOTIFICATION) {
    const p = proposal as NotificationProposal;
    const targets = await resolveTargets(
      core.db,
      userId,
      p.targets.map((t) => t.id),
    );
    const payload = {
      title: { en: p.messages.en.title, ru: p.messages.ru.title },
      text: { en: p.messages.en.text, ru: p.messages.ru.text },
    };
    const eventId = await emitOwn(core, {
      userId,
      source: ASSISTANT_SOURCE,
      type: ASSISTANT_MESSAGE,
      payload,
      targetIds: targets.map((t) => t.id),
    });
    return { status: 'sent', event_id: eventId, targets: targets.map((t) => t.name) };
  }
  if (name === SCHEDULE_MESSAGE) {
    const p = proposal as ScheduleProposal;
    const targets = await resolveTargets(
      core.db,
      userId,
      p.targets.map((t) => t.id),
    );
    const input: ActionInput = {
      name: p.name,
      kind: 'message',
      schedule: p.schedule,
      timezone: p.timezone,
      enabled: true,
      config: { target_ids: targets.map((t) => t.id), title: p.title, body: p.body },
    };
    let next: string | null;
    try {
      next = await validateAction(core, userId, input);
    } catch (err) {
      throw new ToolInputError(err instanceof HttpError ? err.message : 'The scheduled action was refused.');
    }
    const id = await insertAction(core, userId, input, next);
    return {
      status: 'scheduled',
      action_id: id,
      name: p.name,
      schedule: p.schedule,
      timezone: p.timezone,
      next_run_at: next,
      targets: targets.map((t) => t.name),
    };
  }
  throw new ToolInputError(`Unknown tool "${name}".`);
}
