/**
 * The assistant's tools over the relay, offered beside the memory and document searches and bound
 * to the user the reply answers: `search_events`, `event_stats` and `delivery_status` (offered
 * when the user has events) read the event log; `send_notification` and `schedule_message`
 * (offered when the user has an enabled target and the relay runs) act, each only after the user
 * confirmed the call (see consent.ts). Descriptions are in the user's language.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Core } from '../core.ts';
import { relayIfRunning } from '../relay/routes/common.ts';
import { DISPATCH_STATUSES, SEVERITIES } from '../relay/vocabulary.ts';
import type { PublicUser } from '../users/users.ts';
import type { Consents } from './consent.ts';
import { deliveryStatus, EVENT_LIMITS, eventStats, hasEvents, searchEvents, ToolInputError } from './event-search.ts';
import {
  CONSENT_TOOLS,
  ownTargets,
  proposeNotification,
  proposeSchedule,
  SCHEDULE_MESSAGE,
  SEND_NOTIFICATION,
  type TargetRef,
} from './lab-actions.ts';
import { lab } from './lab-strings.ts';
import type { ToolOutcome } from './tools.ts';

export const SEARCH_EVENTS = 'search_events';
export const EVENT_STATS = 'event_stats';
export const DELIVERY_STATUS = 'delivery_status';
const READ_TOOLS: ReadonlySet<string> = new Set([SEARCH_EVENTS, EVENT_STATS, DELIVERY_STATUS]);

/** The lab tools of one reply. `run` answers undefined for a tool that is not one of them. */
export interface LabTools {
  definitions: ChatCompletionTool[];
  run(name: string, args: Record<string, unknown>): Promise<ToolOutcome | undefined>;
}

function fn(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[] = [],
): ChatCompletionTool {
  return {
    type: 'function',
    function: {
      name,
      description,
      parameters: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    },
  };
}

const str = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra });

/** The period parameters shared by the reading tools. */
function periodParams(l: string) {
  return {
    since: str(lab(l, 'param.since')),
    until: str(lab(l, 'param.until')),
    last_hours: { type: 'number', description: lab(l, 'param.last_hours'), minimum: 1, maximum: 8784 },
  };
}

function targetList(l: string, targets: TargetRef[]): string {
  return targets.length
    ? targets.map((t) => lab(l, 'target.line', { name: t.name, id: t.id, kind: t.kind, locale: t.locale })).join('; ')
    : lab(l, 'targets.none');
}

/** The lab tool definitions in the user's language, for the data they have. */
export function labDefinitions(
  l: string,
  now: Date,
  has: { events: boolean; targets: TargetRef[] },
): ChatCompletionTool[] {
  const out: ChatCompletionTool[] = [];
  const at = now.toISOString();
  if (has.events) {
    out.push(
      fn(SEARCH_EVENTS, lab(l, 'tool.search_events', { now: at }), {
        query: str(lab(l, 'param.events_query')),
        provider: str(lab(l, 'param.provider')),
        event_type: str(lab(l, 'param.event_type')),
        severity: str(lab(l, 'param.severity'), { enum: [...SEVERITIES] }),
        dispatch_status: str(lab(l, 'param.dispatch_status'), { enum: [...DISPATCH_STATUSES] }),
        ...periodParams(l),
      }),
    );
    out.push(
      fn(EVENT_STATS, lab(l, 'tool.event_stats', { now: at }), {
        provider: str(lab(l, 'param.provider')),
        ...periodParams(l),
      }),
    );
    out.push(
      fn(DELIVERY_STATUS, lab(l, 'tool.delivery_status'), { event_id: str(lab(l, 'param.event_id')) }, ['event_id']),
    );
  }
  if (has.targets.length) {
    const targets = targetList(l, has.targets);
    const refs = {
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      maxItems: 20,
      description: lab(l, 'param.targets'),
    };
    out.push(
      fn(
        SEND_NOTIFICATION,
        lab(l, 'tool.send_notification', { targets }),
        {
          targets: refs,
          title: str(lab(l, 'param.title')),
          text: str(lab(l, 'param.text')),
          translations: {
            type: 'object',
            description: lab(l, 'param.translations'),
            properties: Object.fromEntries(
              ['en', 'ru'].map((x) => [
                x,
                { type: 'object', properties: { title: { type: 'string' }, text: { type: 'string' } } },
              ]),
            ),
          },
        },
        ['targets', 'title', 'text'],
      ),
    );
    out.push(
      fn(
        SCHEDULE_MESSAGE,
        lab(l, 'tool.schedule_message', { targets }),
        {
          name: str(lab(l, 'param.action_name')),
          schedule: str(lab(l, 'param.schedule')),
          timezone: str(lab(l, 'param.timezone')),
          targets: refs,
          title: str(lab(l, 'param.message_title')),
          body: str(lab(l, 'param.message_body')),
        },
        ['schedule', 'targets', 'title', 'body'],
      ),
    );
  }
  return out;
}

/** Takes items in order while the characters they add stay within EVENT_LIMITS.totalChars. */
function bounded<T>(items: T[]): T[] {
  const out: T[] = [];
  let used = 0;
  for (const item of items) {
    const n = JSON.stringify(item).length;
    if (used + n > EVENT_LIMITS.totalChars) break;
    used += n;
    out.push(item);
  }
  return out;
}

/**
 * The lab tools for `user` in one reply of `chatId` (whose assistant message will be `messageId`).
 * A failing tool is reported to the model, never thrown.
 */
export async function labTools(
  core: Core,
  user: PublicUser,
  reply: { chatId: string; messageId: string; consents?: Consents },
): Promise<LabTools> {
  const [events, targets] = await Promise.all([hasEvents(core.db, user.id), ownTargets(core.db, user.id)]);
  // Acting needs the relay to deliver, and somewhere to record the user's answer.
  const canAct = Boolean(reply.consents && relayIfRunning(core));
  const definitions = labDefinitions(user.locale, core.clock.now(), { events, targets: canAct ? targets : [] });
  const offered = new Set(definitions.map((d) => (d.type === 'function' ? d.function.name : '')));
  const log = core.logs.get('assistant');
  return {
    definitions,
    async run(name, args) {
      if (!READ_TOOLS.has(name) && !CONSENT_TOOLS.has(name)) return undefined;
      if (!offered.has(name))
        return { ok: false, result: { error: `The tool "${name}" is not available in this reply.` } };
      try {
        if (name === SEARCH_EVENTS) {
          const r = await searchEvents(core, user.id, args, user.locale, EVENT_LIMITS.results);
          const shown = bounded(r.events);
          const query = typeof args.query === 'string' ? args.query.slice(0, 200) : '';
          return {
            ok: true,
            result: {
              now: core.clock.now().toISOString(),
              since: r.since,
              until: r.until,
              count: shown.length,
              more: r.more || shown.length < r.events.length,
              events: shown,
            },
            summary: { query, count: shown.length },
          };
        }
        if (name === EVENT_STATS) {
          const r = await eventStats(core, user.id, args);
          return { ok: true, result: r, summary: { query: '', count: Number(r.total) } };
        }
        if (name === DELIVERY_STATUS) {
          const id = typeof args.event_id === 'string' ? args.event_id.trim() : '';
          const r = await deliveryStatus(core, user.id, id, user.locale);
          if (!r)
            return {
              ok: false,
              result: { error: "No event with this id among the user's events. Use an id from search_events." },
            };
          return { ok: true, result: r };
        }
        // The acting tools: checked now, carried out only once the user approves.
        const proposal =
          name === SEND_NOTIFICATION
            ? await proposeNotification(core.db, user.id, user.locale, args)
            : await proposeSchedule(core.db, user.id, core.clock.now(), args);
        const consents = reply.consents!;
        const call = await consents.propose({
          userId: user.id,
          chatId: reply.chatId,
          messageId: reply.messageId,
          name,
          proposal,
        });
        return {
          ok: true,
          result: { status: 'needs_confirmation' },
          confirm: {
            id: call.id,
            expires_at: call.expires_at,
            proposal,
            decision: (signal) => consents.outcome(call.id, signal),
          },
        };
      } catch (err) {
        if (err instanceof ToolInputError) return { ok: false, result: { error: err.message } };
        log.error({ err, tool: name }, 'lab tool failed');
        return { ok: false, result: { error: 'The tool failed.' } };
      }
    },
  };
}

export { SCHEDULE_MESSAGE, SEND_NOTIFICATION };
