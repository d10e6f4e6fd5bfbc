/** Reads the delivery body: JSON, or the `payload` field of a form post (both hosts offer it). */

import type { InboundWebhook } from '@herald/plugin-api';
import { jsonTooDeep, MAX_JSON_DEPTH, WebhookRejectedError } from '@herald/plugin-api';
import type { Obj } from './normalize/common.ts';
import { isObj } from './normalize/common.ts';

export function readBody(req: InboundWebhook): Obj {
  let body = req.body;
  const type = req.headers['content-type'] ?? '';
  if (body === undefined || /application\/x-www-form-urlencoded/i.test(type)) {
    const raw = req.rawBody.toString('utf8');
    const text = /application\/x-www-form-urlencoded/i.test(type)
      ? (new URLSearchParams(raw).get('payload') ?? '')
      : raw;
    if (jsonTooDeep(text))
      throw new WebhookRejectedError(400, `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      body = JSON.parse(text);
    } catch {
      throw new WebhookRejectedError(400, 'the body is neither JSON nor a form with a JSON payload field');
    }
  }
  if (!isObj(body)) throw new WebhookRejectedError(422, 'unexpected payload: the body is not a JSON object');
  return body;
}
