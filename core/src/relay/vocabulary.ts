/**
 * The relay's vocabularies, defined once: each value list with the TypeBox schema built from it (an
 * `enum` in the OpenAPI document).
 * Routes, backups, the pipeline and the assistant's tools import them from here, so that a new
 * value (a dispatch status, a quiet policy) or a changed limit is one edit, and a list that drifts
 * between the API and a backup cannot happen.
 */
import Type, { type Static } from 'typebox';
import { OUTBOUND_ALLOW_MAX } from '../net/instance-allow.ts';

/** How much an event matters (the plugin contract's `Severity`). */
export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const SeveritySchema = Type.Enum(SEVERITIES, { description: 'How much the event matters.' });

/** An event's dispatch_status values: the event log's filter and the assistant's event tools take these. */
export const DISPATCH_STATUSES = ['pending', 'deferred', 'dispatched', 'partial', 'failed', 'dropped'] as const;
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];
export const DispatchStatusSchema = Type.Enum(DISPATCH_STATUSES, { description: "The event's dispatch status." });

/** What a tracker does with an event type during its quiet hours. */
export const QUIET_POLICIES = ['defer', 'send', 'drop'] as const;
export type QuietPolicy = (typeof QUIET_POLICIES)[number];
export const QuietPolicySchema = Type.Enum(QUIET_POLICIES);

/** How a tracker's deferred notifications go out when its quiet hours end. */
export const QUIET_RELEASES = ['each', 'digest'] as const;
export type QuietRelease = (typeof QUIET_RELEASES)[number];
export const QuietReleaseSchema = Type.Enum(QUIET_RELEASES, {
  description:
    '`each` (default): deferred notifications are released one by one when the quiet hours end; `digest`: ' +
    'one message per target lists them, grouped by provider and event type.',
});

/** A tracker's quiet window (`HH:MM` to `HH:MM` in an IANA time zone) or none; `quietWindowProblem` checks it. */
export const QuietHoursSchema = Type.Union([
  Type.Object(
    {
      start: Type.String({ maxLength: 16 }),
      end: Type.String({ maxLength: 16 }),
      timezone: Type.String({ minLength: 1, maxLength: 64 }),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type QuietHours = Static<typeof QuietHoursSchema>;

/** The longest name of a provider, tracker, target, bot or action. */
export const NAME_MAX = 200;
export const NameSchema = Type.String({ minLength: 1, maxLength: NAME_MAX });

/** The longest event type (a plugin's declared type, or a generic webhook's mapped one). */
export const EVENT_TYPE_MAX = 100;
export const EventTypeSchema = Type.String({ minLength: 1, maxLength: EVENT_TYPE_MAX });

/** One entry of an outbound allow list: a CIDR, an address or a DNS host name. */
export const OutboundAllowEntrySchema = Type.String({ minLength: 1, maxLength: 253 });
/**
 * A provider's or target's own outbound allow list as a request sends it; `null` or `[]` clears it
 * (routes/outbound-allow.ts checks the entries and who may set it).
 */
export const OutboundAllowSchema = Type.Union(
  [Type.Array(OutboundAllowEntrySchema, { maxItems: OUTBOUND_ALLOW_MAX }), Type.Null()],
  {
    description:
      'Private ranges (CIDR such as `192.168.1.0/24`, or one address) or DNS host names this instance ' +
      'alone may reach besides the service-wide `SERVICE_OUTBOUND_ALLOW_CIDRS`; public addresses are ' +
      'always reachable. Only an administrator may set or change it (403 `outbound_allow_admin_only`); ' +
      '`null` or `[]` clears it.',
  },
);
/** The list as a backup carries it: absent when there is none. */
export const OutboundAllowRecordSchema = Type.Array(OutboundAllowEntrySchema, { maxItems: OUTBOUND_ALLOW_MAX });

/** The language of a user, a target or a template. */
export const LOCALES = ['en', 'ru'] as const;
export const LocaleSchema = Type.Union([Type.Literal('en'), Type.Literal('ru')]);

/** What a scheduled action does: a tracker's digest, a fixed message, or an AI-written digest. */
export const ACTION_KINDS = ['digest', 'message', 'ai_digest'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];
export const ActionKindSchema = Type.Union([
  Type.Literal('digest'),
  Type.Literal('message'),
  Type.Literal('ai_digest'),
]);
