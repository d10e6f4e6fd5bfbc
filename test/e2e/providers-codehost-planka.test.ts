/**
 * End to end through the real service: code host (GitHub, Gitea) and Planka webhooks arrive at
 * `/api/hooks/{token}`, are verified by the plugin and reach a recording target.
 */

import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { chain, payloadLog, plugins, recorder, relayOf } from './support.ts';

const SECRET = 'codehost-e2e-secret-0123456789';
const fixture = (pkg: string, name: string) =>
  readFileSync(new URL(`../../plugins/${pkg}/test-fixtures/${name}.json`, import.meta.url), 'utf8');

/** The headers GitHub or Gitea send with a delivery of `raw`, signed with `secret`. */
function signed(
  host: 'github' | 'gitea',
  event: string,
  raw: string,
  id: string,
  secret = SECRET,
): Record<string, string> {
  const hex = crypto.createHmac('sha256', secret).update(raw).digest('hex');
  if (host === 'github') {
    return {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': `sha256=${hex}`,
      'user-agent': 'GitHub-Hookshot/e2e',
    };
  }
  return {
    'content-type': 'application/json',
    'x-gitea-event': event,
    'x-gitea-event-type': event,
    'x-gitea-delivery': id,
    'x-gitea-signature': hex,
    'x-github-event': event,
    'x-github-delivery': id,
    'x-hub-signature-256': `sha256=${hex}`,
    'user-agent': 'Go-http-client/1.1',
  };
}

async function codehost(s: TestService, host: 'github' | 'gitea', sinkUrl: string) {
  const target = await recorder(s, sinkUrl, `${host} rec`);
  return chain(s, { provider: { kind: 'codehost', name: host, config: { host, webhook_secret: SECRET } }, target });
}

for (const host of ['github', 'gitea'] as const) {
  t.test(
    `codehost ${host}: signed push and merged pull request become messages; bad signature 401; replay 409`,
    async (t) => {
      const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-codehost') });
      const sink = await startSink();
      t.teardown(async () => {
        await s.stop();
        await sink.close();
      });
      const { provider, hook } = await codehost(s, host, sink.url);
      const relay = relayOf(s);

      const push = fixture('provider-codehost', `${host}/push`);
      const pushId = crypto.randomUUID();
      const r1 = await s.request('POST', hook, { raw: push, headers: signed(host, 'push', push, pushId) });
      t.equal(r1.status, 202, `push accepted: ${r1.text}`);
      t.equal(r1.body.event_ids.length, 1);

      const pr = fixture('provider-codehost', `${host}/pull_request-merged`);
      const r2 = await s.request('POST', hook, {
        raw: pr,
        headers: signed(host, 'pull_request', pr, crypto.randomUUID()),
      });
      t.equal(r2.status, 202, `merged pull request accepted: ${r2.text}`);
      await relay.tick();
      const titles = sink.received.map((x) => x.body.title);
      t.equal(titles.length, 2, 'two messages at the target');
      t.match(titles[0], /^New commits in [^:]+:main$/, 'push message');
      t.match(titles[1], /Pull request #\d+ merged: /, 'merge message');
      t.equal(sink.received[1].body.eventType, 'pull_request_merged');

      const bad = await s.request('POST', hook, {
        raw: push,
        headers: signed(host, 'push', push, crypto.randomUUID(), 'not-the-right-secret-000'),
      });
      t.equal(bad.status, 401, 'wrong signature refused');
      const log = await payloadLog(s, provider.id);
      const refused = log.find((e) => e.status_code === 401);
      t.ok(refused, 'the refused delivery is in the payload log');
      t.match(refused.error_message, /signature/);
      t.equal(log.filter((e) => e.status_code === 202).length, 2, 'the accepted ones too');

      const replay = await s.request('POST', hook, { raw: push, headers: signed(host, 'push', push, pushId) });
      t.equal(replay.status, 409, 'the same delivery id again is refused');
      t.match(replay.body.detail, /already processed/);
      await relay.tick();
      t.equal(sink.received.length, 2, 'nothing more was sent');
    },
  );
}

t.test('planka: a bearer-authenticated card move becomes a message; a wrong token gets 401', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-planka') });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = 'planka-access-token-e2e-0123';
  const target = await recorder(s, sink.url);
  const { hook, provider } = await chain(s, {
    provider: {
      kind: 'planka',
      name: 'Boards',
      config: { access_token: token, base_url: 'https://planka.example.net' },
    },
    target,
  });
  const moved = fixture('provider-planka', 'card-update-moved');

  const wrong = await s.request('POST', hook, {
    raw: moved,
    headers: { 'content-type': 'application/json', authorization: 'Bearer planka-wrong-token-000000' },
  });
  t.equal(wrong.status, 401);
  const missing = await s.request('POST', hook, { raw: moved, headers: { 'content-type': 'application/json' } });
  t.equal(missing.status, 401, 'no token at all');

  const r = await s.request('POST', hook, {
    raw: moved,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  });
  t.equal(r.status, 202, r.text);
  await relayOf(s).tick();
  t.equal(sink.received.length, 1);
  const m = sink.received[0].body;
  t.equal(m.eventType, 'card_moved');
  t.equal(m.title, 'Card moved: Replace UPS battery');
  t.match(m.plainBody, /to In progress/);
  t.match(m.plainBody, /https:\/\/planka\.example\.net\/cards\/1357158568008091270/, 'card link from base_url');
  t.same((await payloadLog(s, provider.id)).map((e) => e.status_code).sort(), [202, 401, 401]);
});
