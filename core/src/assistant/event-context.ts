/**
 * "Ask the assistant" on an event: a chat created with `event_id` carries that event in every
 * reply's request, as a system message after the skill prompt: the event (its message, payload
 * with fields named like secrets redacted), its deliveries, and the provider's recent events. Read
 * afresh for each reply, bound to the chat's owner; an event deleted since leaves nothing.
 */
import type { Core } from '../core.ts';
import { catalogOf, oneLine, overridesFor, renderEvent } from '../relay/routes/templates.ts';
import { deliveriesOf, type EventRow, shownPayload } from './event-search.ts';
import { lab, langOf } from './lab-strings.ts';

/** The provider's events listed with the event. */
const HISTORY = 10;
/** Characters of the event's text. */
const BODY_CHARS = 1500;

/** The caller's event `eventId` (or undefined when it is not theirs), rendered in `locale`. */
export async function ownEvent(core: Core, userId: string, eventId: string): Promise<EventRow | undefined> {
  return core.db.get<EventRow>(
    'SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id ' +
      'WHERE e.id = ? AND e.user_id = ?',
    [eventId, userId],
  );
}

/** The one-line message of an event in `locale`, as the event log shows it. */
export async function eventMessage(core: Core, userId: string, e: EventRow, locale: string): Promise<string> {
  const l = langOf(locale);
  const override = (await overridesFor(core.db, userId, [e.event_type], l)).get(e.event_type);
  return oneLine(renderEvent(catalogOf(core), e, l, override));
}

/** The system message of a chat about an event; empty when the event is gone. */
export async function eventContext(core: Core, userId: string, eventId: string, locale: string): Promise<string> {
  const e = await ownEvent(core, userId, eventId);
  if (!e) return '';
  const l = langOf(locale);
  const catalog = catalogOf(core);
  const overrides = await overridesFor(core.db, userId, [e.event_type], l);
  const rendered = renderEvent(catalog, e, l, overrides.get(e.event_type));
  const body = rendered.body.trim();
  const lines: string[] = [lab(l, 'event_context'), '', `## ${lab(l, 'event_context.event')}`];
  lines.push(
    `id: ${e.id}`,
    `occurred_at: ${e.occurred_at}`,
    `provider: ${e.provider_name ?? e.provider_kind} (${e.provider_kind})`,
    `event_type: ${e.event_type}`,
    `severity: ${e.severity}`,
    `dispatch_status: ${e.dispatch_status}`,
    `message: ${oneLine(rendered)}`,
  );
  if (body) lines.push(`text: ${body.length > BODY_CHARS ? `${body.slice(0, BODY_CHARS - 1)}…` : body}`);
  lines.push(`payload: ${shownPayload(e.payload)}`);

  const deliveries = await deliveriesOf(core.db, userId, e.id);
  lines.push('', `## ${lab(l, 'event_context.deliveries')}`);
  if (!deliveries.length) lines.push(lab(l, 'event_context.no_deliveries'));
  for (const d of deliveries) {
    const { target, target_kind, ...rest } = d;
    lines.push(
      `- ${target}${target_kind ? ` (${target_kind})` : ''}: ${Object.entries(rest)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  }

  const recent = e.provider_id
    ? await core.db.all<EventRow>(
        'SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = ' +
          'e.provider_id WHERE e.user_id = ? AND e.provider_id = ? AND e.id <> ? ORDER BY e.id DESC LIMIT ?',
        [userId, e.provider_id, e.id, HISTORY],
      )
    : [];
  lines.push('', `## ${lab(l, 'event_context.history')}`);
  if (!recent.length) lines.push(lab(l, 'event_context.no_history'));
  const more = await overridesFor(
    core.db,
    userId,
    recent.map((r) => r.event_type),
    l,
  );
  for (const r of recent) {
    lines.push(
      `- ${r.occurred_at} · ${r.event_type} · ${r.severity} · ${r.dispatch_status} · id ${r.id} — ` +
        `${oneLine(renderEvent(catalog, r, l, more.get(r.event_type)))}`,
    );
  }
  return lines.join('\n');
}
