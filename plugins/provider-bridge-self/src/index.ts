import { defineProvider, Type } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };

const TrackerRef = {
  tracker_id: Type.Optional(Type.String()),
  tracker_name: Type.Optional(Type.String()),
  provider_id: Type.Optional(Type.String()),
  provider_name: Type.Optional(Type.String()),
  provider_kind: Type.Optional(Type.String()),
};

/**
 * `bridge_self`: the service watching itself. Its manifest's `selfMonitoring` makes it the receiver
 * of the core's self-monitoring signals: the core creates exactly one per user (named after
 * `displayName`), keeps the counters, and raises each signal as the event type mapped here. The
 * plugin only declares the events. Templates live in the top-level
 * `locales/<lang>/templates/bridge_self.json`, so operators find them beside the others.
 */
export default defineProvider({
  manifest: {
    id: 'bridge_self',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Self-monitoring',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Raises events when polls, dispatches or sends keep failing.',
    ingest: 'internal',
    coreManaged: true,
    selfMonitoring: {
      events: {
        pollFailures: 'bridge_self_poll_failures',
        deferredBacklog: 'bridge_self_deferred_backlog',
        targetFailures: 'bridge_self_target_failures',
      },
    },
    configSchema: Type.Object({}, { additionalProperties: false }),
    events: {
      bridge_self_poll_failures: {
        payload: Type.Object({
          ...TrackerRef,
          failures: Type.Integer(),
          threshold: Type.Integer(),
          last_error: Type.Optional(Type.String()),
        }),
        quietHours: 'send',
        severity: 'warning',
        description: 'Consecutive failed polls of a tracker reached the threshold.',
        example: {
          tracker_name: 'Album: Summer trip',
          provider_name: 'Family photos',
          provider_kind: 'immich',
          failures: 3,
          threshold: 3,
          last_error: 'connect ECONNREFUSED',
        },
      },
      bridge_self_deferred_backlog: {
        payload: Type.Object({ pending: Type.Integer(), threshold: Type.Integer() }),
        quietHours: 'send',
        severity: 'warning',
        description: 'The pending deferred notifications crossed the threshold.',
        example: { pending: 100, threshold: 100 },
      },
      bridge_self_target_failures: {
        payload: Type.Object({
          target_id: Type.String(),
          target_name: Type.String(),
          target_kind: Type.String(),
          failures: Type.Integer(),
          threshold: Type.Integer(),
          last_error: Type.Optional(Type.String()),
          status_code: Type.Optional(Type.Integer()),
        }),
        quietHours: 'send',
        severity: 'critical',
        description: 'Consecutive 5xx or network failures to one target reached the threshold.',
        example: {
          target_id: '01900000-0000-7000-8000-000000000000',
          target_name: 'Family chat',
          target_kind: 'telegram',
          failures: 5,
          threshold: 5,
          last_error: 'Bad Gateway',
          status_code: 502,
        },
      },
    },
  },
  create: () => ({}),
});
