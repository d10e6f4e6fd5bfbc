/**
 * Immich provider: follows albums and notifies when photos or videos are added or removed.
 * Polls the Immich REST API (default every 60 s) with an API key.
 */

import type { HealthReport, PollContext } from '@herald/plugin-api';
import { defineProvider } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { ImmichAuthError, ImmichClient } from './client.ts';
import { ConfigSchema, TrackerSchema } from './config.ts';
import { events } from './events.ts';
import { pollAlbums } from './poll.ts';
import { templates } from './templates.ts';

export default defineProvider({
  manifest: {
    id: 'immich',
    kind: 'provider',
    apiVersion: 1,
    displayName: 'Immich (photo library)',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Notifies when assets are added to or removed from followed Immich albums.',
    configSchema: ConfigSchema,
    // The API key travels in this header: a redirect to another origin must not carry it along.
    credentialHeaders: ['x-api-key'],
    trackerSchema: TrackerSchema,
    ingest: 'poll',
    pollIntervalSeconds: 60,
    events,
    templates,
  },
  create(ctx) {
    const client = new ImmichClient(
      ctx.http,
      ctx.config.base_url,
      ctx.config.api_key,
      ctx.config.timeout_seconds * 1000,
    );
    let lastError: string | undefined;
    let polled = false;
    // The album index as this instance last wrote or read it (poll.ts).
    const memo: { albums?: string[] } = {};
    return {
      /** Checks that Immich answers and the key is accepted; a key limited to albums and assets is fine. */
      async start() {
        await client.get('/server/ping', ctx.signal);
        try {
          await client.get('/users/me', ctx.signal);
        } catch (err) {
          // 403 means the key works but lacks user.read, which this provider does not need.
          if (err instanceof ImmichAuthError && err.status === 403)
            ctx.log.debug({}, 'API key has no user.read permission');
          else throw err;
        }
      },
      async poll(pc: PollContext) {
        try {
          await pollAlbums({ client, store: ctx.store, log: ctx.log, emit: (e) => ctx.emit(e), memo }, pc);
          lastError = undefined;
        } catch (err) {
          lastError = (err as Error).message;
          throw err;
        } finally {
          polled = true;
        }
      },
      health(): HealthReport {
        if (!polled) return { status: 'ok', detail: 'not polled yet' };
        return lastError ? { status: 'degraded', detail: lastError } : { status: 'ok' };
      },
    };
  },
});
