import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import type { Host } from './config.ts';
import plugin from './index.ts';
import { delivery, fixture, SECRET } from './test-support.ts';

const rej = (status: number, message?: RegExp) => ({
  code: 'WEBHOOK_REJECTED',
  status,
  ...(message ? { message } : {}),
});

async function setup(host: Host) {
  const th = createTestHost();
  const h = await th.provider(plugin, { host, webhook_secret: SECRET });
  return { ...h, clock: th.clock, send: h.instance.handleWebhook! };
}

t.test('manifest: id, ingest, body limit, templates in both locales for every event type', async (t) => {
  const m = plugin.manifest;
  t.equal(m.id, 'codehost');
  t.equal(m.displayName, 'Code host (GitHub, Gitea, Forgejo)');
  t.equal(m.ingest, 'webhook');
  t.equal(m.webhook!.maxBodyBytes, 5 * 1024 * 1024);
  const types = Object.keys(m.events!);
  t.same(types.sort(), [
    'issue_closed',
    'issue_comment',
    'issue_opened',
    'pull_request_closed',
    'pull_request_merged',
    'pull_request_opened',
    'push',
    'release_published',
    'workflow_run_failed',
  ]);
  for (const type of types) {
    t.ok(m.templates!.en![type]?.title && m.templates!.en![type]?.body, `en ${type}`);
    t.ok(m.templates!.ru![type]?.title && m.templates!.ru![type]?.body, `ru ${type}`);
    t.not(m.templates!.ru![type]!.title, m.templates!.en![type]!.title, `ru ${type} is translated`);
  }
});

t.test('the secret must be at least 16 characters', async (t) => {
  await t.rejects(createTestHost().provider(plugin, { host: 'github', webhook_secret: 'short' }), /invalid config/);
});

for (const host of ['github', 'gitea', 'forgejo'] as const) {
  t.test(`${host}: good, bad and missing signatures`, async (t) => {
    const { send } = await setup(host);
    const raw = fixture(`${host}/push`);
    t.equal((await send(delivery(host, 'push', raw))).events.length, 1, 'good signature');
    await t.rejects(
      send(delivery(host, 'push', raw, { signature: 'tamper' })),
      rej(401, /does not match/),
      'signature of another body',
    );
    await t.rejects(
      send(delivery(host, 'push', raw, { secret: 'another-secret-entirely' })),
      rej(401, /does not match/),
      'wrong secret',
    );
    await t.rejects(
      send(delivery(host, 'push', raw, { signature: 'omit' })),
      rej(401, /missing signature header/),
      'no signature',
    );
  });
}

t.test('gitea accepts X-Hub-Signature-256 alone, forgejo accepts X-Gitea-Signature alone', async (t) => {
  const gitea = await setup('gitea');
  const raw = fixture('gitea/push');
  const viaHub = delivery('gitea', 'push', raw, { headers: { 'x-gitea-signature': undefined } });
  t.equal((await gitea.send(viaHub)).events.length, 1);
  const forgejo = await setup('forgejo');
  const viaGitea = delivery('forgejo', 'push', fixture('forgejo/push'), {
    headers: { 'x-forgejo-signature': undefined, 'x-hub-signature-256': undefined },
  });
  t.equal((await forgejo.send(viaGitea)).events.length, 1);
});

t.test('github ignores Gitea-style signatures, malformed headers are refused', async (t) => {
  const { send } = await setup('github');
  const raw = fixture('github/push');
  const giteaStyle = delivery('github', 'push', raw, {
    headers: { 'x-hub-signature-256': undefined, 'x-gitea-signature': 'a'.repeat(64) },
  });
  await t.rejects(send(giteaStyle), rej(401, /missing signature/));
  await t.rejects(
    send(delivery('github', 'push', raw, { headers: { 'x-hub-signature-256': 'sha1=abc' } })),
    rej(401, /malformed/),
  );
  await t.rejects(
    send(delivery('github', 'push', raw, { headers: { 'x-hub-signature-256': 'sha256=xyz' } })),
    rej(401, /malformed/),
  );
});

t.test('a delivery id is accepted once for seven days', async (t) => {
  const { send, clock } = await setup('github');
  const raw = fixture('github/push');
  const id = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
  t.equal((await send(delivery('github', 'push', raw, { id }))).events.length, 1);
  await t.rejects(send(delivery('github', 'push', raw, { id })), rej(409, /already processed/));
  t.equal((await send(delivery('github', 'push', raw))).events.length, 1, 'another id passes');
  clock.advance(7 * 24 * 3600 * 1000 - 1000);
  await t.rejects(send(delivery('github', 'push', raw, { id })), rej(409), 'still remembered just before a week');
  clock.advance(2000);
  t.equal((await send(delivery('github', 'push', raw, { id }))).events.length, 1, 'forgotten after a week');
});

t.test('a bad signature does not burn the delivery id', async (t) => {
  const { send } = await setup('gitea');
  const raw = fixture('gitea/push');
  await t.rejects(send(delivery('gitea', 'push', raw, { id: 'd-1', signature: 'tamper' })), rej(401));
  t.equal((await send(delivery('gitea', 'push', raw, { id: 'd-1' }))).events.length, 1);
});

t.test('missing event or delivery headers are refused', async (t) => {
  const { send } = await setup('github');
  const raw = fixture('github/push');
  await t.rejects(
    send(delivery('github', 'push', raw, { headers: { 'x-github-event': undefined } })),
    rej(400, /x-github-event/),
  );
  await t.rejects(
    send(delivery('github', 'push', raw, { headers: { 'x-github-delivery': undefined } })),
    rej(400, /x-github-delivery/),
  );
});

t.test('unexpected payload shapes answer 422 with the field named', async (t) => {
  const { send } = await setup('github');
  const push = JSON.parse(fixture('github/push'));
  delete push.repository;
  await t.rejects(send(delivery('github', 'push', JSON.stringify(push))), rej(422, /repository is missing/));
  const pr = JSON.parse(fixture('github/pull_request-opened'));
  delete pr.pull_request;
  await t.rejects(send(delivery('github', 'pull_request', JSON.stringify(pr))), rej(422, /pull_request is missing/));
  const issue = JSON.parse(fixture('github/issues-opened'));
  issue.issue.number = '7';
  await t.rejects(
    send(delivery('github', 'issues', JSON.stringify(issue))),
    rej(422, /issue\.number is not an integer/),
  );
  const commits = JSON.parse(fixture('github/push'));
  commits.commits = [{ message: 'no id' }];
  await t.rejects(send(delivery('github', 'push', JSON.stringify(commits))), rej(422, /commits\[0\]\.id/));
  await t.rejects(send(delivery('github', 'push', '[1, 2]')), rej(422, /not a JSON object/));
  await t.rejects(send(delivery('github', 'push', 'not json', { contentType: 'text/plain' })), rej(400));
});

t.test('form-encoded deliveries carry the JSON in the payload field', async (t) => {
  const { send } = await setup('github');
  const form = new URLSearchParams({ payload: fixture('github/push') }).toString();
  const res = await send(delivery('github', 'push', form, { contentType: 'application/x-www-form-urlencoded' }));
  t.equal(res.events[0]!.payload.branch, 'main');
});
