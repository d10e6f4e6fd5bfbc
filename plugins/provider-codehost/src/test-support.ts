/**
 * Test support (not used at runtime): builds signed deliveries the way each host sends them,
 * from the JSON fixtures in `test-fixtures/`.
 */

import { strict as assert } from 'node:assert';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { InboundWebhook, WebhookResult } from '@herald/plugin-api';
import { validateConfig } from '@herald/plugin-api/testing';
import type { Host } from './config.ts';
import plugin from './index.ts';

export const SECRET = 'codehost-webhook-secret-0123';

export function fixture(path: string): string {
  return readFileSync(new URL(`../test-fixtures/${path}.json`, import.meta.url), 'utf8');
}

export interface DeliveryOptions {
  id?: string;
  secret?: string;
  /** `omit` drops every signature header, `tamper` signs a different body. */
  signature?: 'ok' | 'omit' | 'tamper';
  /** Extra headers, or `undefined` values to drop one the host would send. */
  headers?: Record<string, string | undefined>;
  eventType?: string;
  contentType?: string;
}

/** A delivery of `raw` with the headers `host` sends for `event`. */
export function delivery(host: Host, event: string, raw: string, o: DeliveryOptions = {}): InboundWebhook {
  const id = o.id ?? randomUUID();
  const signed = o.signature === 'tamper' ? `${raw} ` : raw;
  const hex = createHmac('sha256', o.secret ?? SECRET)
    .update(signed)
    .digest('hex');
  const sha1 = createHmac('sha1', o.secret ?? SECRET)
    .update(signed)
    .digest('hex');
  const eventType = o.eventType ?? event;
  let headers: Record<string, string | undefined>;
  if (host === 'github') {
    headers = {
      'x-github-event': event,
      'x-github-delivery': id,
      'x-github-hook-id': '498112233',
      'x-hub-signature-256': `sha256=${hex}`,
      'x-hub-signature': `sha1=${sha1}`,
      'user-agent': 'GitHub-Hookshot/4b6c2f1',
    };
  } else {
    headers = {
      'x-gitea-event': event,
      'x-gitea-event-type': eventType,
      'x-gitea-delivery': id,
      'x-gitea-signature': hex,
      'x-gogs-event': event,
      'x-gogs-event-type': eventType,
      'x-gogs-delivery': id,
      'x-gogs-signature': hex,
      'x-github-event': event,
      'x-github-event-type': eventType,
      'x-github-delivery': id,
      'x-hub-signature': `sha1=${sha1}`,
      'x-hub-signature-256': `sha256=${hex}`,
      'user-agent': 'Go-http-client/1.1',
    };
    if (host === 'forgejo')
      Object.assign(headers, {
        'x-forgejo-event': event,
        'x-forgejo-event-type': eventType,
        'x-forgejo-delivery': id,
        'x-forgejo-signature': hex,
      });
  }
  headers['content-type'] = o.contentType ?? 'application/json';
  if (o.signature === 'omit') for (const k of Object.keys(headers)) if (/signature/.test(k)) delete headers[k];
  Object.assign(headers, o.headers ?? {});
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  if (headers['content-type'] !== 'application/json') body = undefined;
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) clean[k] = v;
  return { method: 'POST', headers: clean, rawBody: Buffer.from(raw), body, query: {}, ip: '192.0.2.10' };
}

/** The single event of a result, of type `type`, checked against its declared payload schema. */
export function only(res: WebhookResult, type: string): Record<string, unknown> {
  assert.equal(res.events.length, 1, `expected one event, got ${res.events.length}`);
  assert.equal(res.events[0]!.type, type);
  validateConfig(plugin.manifest.events![type]!.payload, res.events[0]!.payload);
  return res.events[0]!.payload;
}
