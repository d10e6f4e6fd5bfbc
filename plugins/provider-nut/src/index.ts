/**
 * UPS provider over the NUT network protocol: polls upsd for `ups.status`, `battery.charge` and
 * `battery.runtime` and reports power failures, power return, low or worn batteries and lost contact.
 */

import type { ProviderDefinition } from '@herald/plugin-api';
import { defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import type { NutTimings } from './config.ts';
import { ConfigSchema, DEFAULT_TIMINGS } from './config.ts';
import { EVENTS } from './events.ts';
import { UpsPoller } from './poller.ts';
import { TEMPLATES } from './templates.ts';

/**
 * Builds the provider definition; the default export uses production time limits, tests pass
 * shorter ones.
 *
 * @example
 * ```ts
 * const fast = createNutProvider({ connectTimeoutMs: 300, replyTimeoutMs: 300 });
 * ```
 */
export function createNutProvider(timings: Partial<NutTimings> = {}): ProviderDefinition<typeof ConfigSchema> {
  const t: NutTimings = { ...DEFAULT_TIMINGS, ...timings };
  return defineProvider({
    manifest: {
      id: 'nut',
      kind: 'provider',
      apiVersion: 1,
      displayName: 'UPS (Network UPS Tools)',
      locales: { en: enLocale, ru: ruLocale },
      description:
        'Watches a UPS through a NUT server (upsd) and reports power failures, power return, low or worn ' +
        'batteries and lost contact.',
      configSchema: ConfigSchema,
      events: EVENTS,
      ingest: 'poll',
      pollIntervalSeconds: 15,
      templates: TEMPLATES,
    },
    // The poller refuses one credential without the other at start; refused when the config is saved too.
    validateConfig: (cfg) =>
      Boolean(cfg.username) !== Boolean(cfg.password)
        ? [
            {
              path: cfg.username ? '/password' : '/username',
              message: 'is required when the other credential is set',
              code: 'required',
              detail: 'Set both username and password of the NUT server, or neither.',
            },
          ]
        : [],
    create(ctx) {
      const poller = new UpsPoller({
        config: ctx.config,
        timings: t,
        http: ctx.http,
        store: ctx.store,
        clock: ctx.clock,
        log: ctx.log.child({ plugin: 'nut' }),
        emit: (e) => ctx.emit(e),
      });
      return {
        start: () => poller.check(ctx.signal),
        poll: (p) => poller.poll(p.signal),
        health: () => poller.health(),
      };
    },
  });
}

export default createNutProvider();
