/**
 * GitHub's own example deliveries (the `@octokit/webhooks-examples` package: every example of
 * github.com and of each GitHub Enterprise Server version it ships, duplicates once) replayed
 * through the real service into the code host provider, signed as GitHub signs them. Each must be
 * accepted: 202 with the event the plugin maps it to, or 200 without an event for the deliveries
 * Herald has no event type for (stated per example below). Every message rendered from them, in
 * English and in Russian, must read cleanly: no `undefined`, `null`, `[object Object]` or a
 * template tag left over.
 */

import crypto from 'node:crypto';
import dotcom from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };
import ghes31 from '@octokit/webhooks-examples/ghes-31/index.json' with { type: 'json' };
import ghes32 from '@octokit/webhooks-examples/ghes-32/index.json' with { type: 'json' };
import ghes33 from '@octokit/webhooks-examples/ghes-33/index.json' with { type: 'json' };
import ghes34 from '@octokit/webhooks-examples/ghes-34/index.json' with { type: 'json' };
import ghes35 from '@octokit/webhooks-examples/ghes-35/index.json' with { type: 'json' };
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';
import { chain, link, plugins, recorder, relayOf } from './support.ts';

type Example = Record<string, any>;
interface Definition {
  name: string;
  examples: Example[];
}

const SOURCES = {
  'api.github.com': dotcom,
  'ghes-31': ghes31,
  'ghes-32': ghes32,
  'ghes-33': ghes33,
  'ghes-34': ghes34,
  'ghes-35': ghes35,
} as unknown as Record<string, Definition[]>;
const SECRET = 'octokit-examples-secret-0123456789';
/** Text that must never reach a reader. */
const LEAKS = /\bundefined\b|\bnull\b|\[object Object\]|\{\{|\}\}|\bNaN\b/;

interface Case {
  label: string;
  event: string;
  body: Example;
  expect: string | null;
}

/**
 * The event type Herald emits for a delivery, or null where it acknowledges without one. Written
 * out from the provider's README, independently of its code.
 */
function expected(event: string, b: Example): string | null {
  switch (event) {
    case 'push':
      return String(b.ref).startsWith('refs/heads/') && !b.deleted && !/^0+$/.test(String(b.after)) ? 'push' : null;
    case 'pull_request':
      if (b.action === 'opened') return 'pull_request_opened';
      if (b.action === 'closed') return b.pull_request.merged ? 'pull_request_merged' : 'pull_request_closed';
      return null;
    case 'issues':
      return b.action === 'opened' ? 'issue_opened' : b.action === 'closed' ? 'issue_closed' : null;
    case 'issue_comment':
      return b.action === 'created' ? 'issue_comment' : null;
    case 'release':
      return b.action === 'published' ? 'release_published' : null;
    case 'workflow_run':
      return b.action === 'completed' && ['failure', 'timed_out', 'startup_failure'].includes(b.workflow_run.conclusion)
        ? 'workflow_run_failed'
        : null;
    default:
      return null;
  }
}

/** Drops the fields at `paths` (dotted; `[]` for each item of an array) from `body`. */
function drop(body: Example, paths: string[]): Example {
  const out = structuredClone(body);
  const del = (o: any, segs: string[]): void => {
    if (o === null || typeof o !== 'object') return;
    const [head, ...rest] = segs;
    if (head === '[]') {
      if (Array.isArray(o)) for (const item of o) del(item, rest);
      return;
    }
    if (!rest.length) delete o[head!];
    else del(o[head!], rest);
  };
  for (const p of paths)
    del(
      out,
      p.split('.').flatMap((x) => (x.endsWith('[]') ? [x.slice(0, -2), '[]'] : [x])),
    );
  return out;
}

/** Every field the provider treats as optional, per delivery: a sparse delivery must still read well. */
const OPTIONAL: Record<string, string[]> = {
  push: [
    'sender',
    'pusher',
    'compare',
    'repository.html_url',
    'commits[].author',
    'commits[].message',
    'commits[].url',
  ],
  pull_request: [
    'sender',
    'pull_request.user',
    'pull_request.html_url',
    'pull_request.head',
    'pull_request.base',
    'pull_request.body',
    'pull_request.merged_by',
    'repository.html_url',
  ],
  issues: ['sender', 'issue.user', 'issue.html_url', 'issue.body', 'issue.labels', 'repository.html_url'],
  issue_comment: [
    'sender',
    'comment.user',
    'comment.html_url',
    'comment.body',
    'issue.html_url',
    'repository.html_url',
  ],
  release: ['sender', 'release.author', 'release.html_url', 'release.name', 'release.body', 'repository.html_url'],
  workflow_run: [
    'sender',
    'workflow',
    'repository.html_url',
    ...[
      'name',
      'display_title',
      'path',
      'run_number',
      'head_branch',
      'head_sha',
      'html_url',
      'actor',
      'triggering_actor',
    ].map((f) => `workflow_run.${f}`),
  ],
};

/**
 * Every distinct example of the package; then real ones turned into the outcomes none of them
 * reaches (a merge, a closed issue, failed runs); then, per mapped delivery, one stripped of every
 * optional field.
 */
function cases(): Case[] {
  const out: Case[] = [];
  const seen = new Set<string>();
  for (const [source, defs] of Object.entries(SOURCES)) {
    for (const def of defs) {
      def.examples.forEach((body, i) => {
        const key = `${def.name}\n${JSON.stringify(body)}`;
        if (seen.has(key)) return;
        seen.add(key);
        out.push({
          label: `${source} ${def.name}${body.action ? `.${body.action}` : ''} #${i}`,
          event: def.name,
          body,
          expect: expected(def.name, body),
        });
      });
    }
  }
  const first = (event: string, pick: (b: Example) => boolean) =>
    structuredClone(SOURCES['api.github.com']!.find((d) => d.name === event)!.examples.find(pick)!);
  const failed = first('workflow_run', (b) => b.action === 'completed' && b.workflow_run.conclusion === 'success');
  failed.workflow_run.conclusion = 'failure';
  const timedOut = structuredClone(failed);
  timedOut.workflow_run.conclusion = 'timed_out';
  const merged = first('pull_request', (b) => b.action === 'closed');
  merged.pull_request.merged = true;
  const closed = first('issues', (b) => b.action === 'opened');
  closed.action = 'closed';
  const derived: [string, string, Example][] = [
    ['workflow_run failure', 'workflow_run', failed],
    ['workflow_run timed_out', 'workflow_run', timedOut],
    ['pull_request merged', 'pull_request', merged],
    ['issues closed', 'issues', closed],
  ];
  const sparse = new Map<string, Case>();
  for (const c of [
    ...out,
    ...derived.map(([label, event, body]) => ({
      label: `derived ${label}`,
      event,
      body,
      expect: expected(event, body),
    })),
  ]) {
    if (c.expect && !sparse.has(c.expect))
      sparse.set(c.expect, {
        label: `${c.label}, sparse`,
        event: c.event,
        body: drop(c.body, OPTIONAL[c.event]!),
        expect: c.expect,
      });
  }
  for (const [label, event, body] of derived)
    out.push({ label: `derived ${label}`, event, body, expect: expected(event, body) });
  return [...out, ...sparse.values()];
}

/** What an empty value leaves behind in a rendered text: doubled or dangling spaces, empty quotes, a bare `#`. */
function blemish(text: string): string | undefined {
  const checks: [RegExp, string][] = [
    [/[ \t]$/m, 'a line ends in a space'],
    [/ {2}/, 'two spaces'],
    [/\n{3}/, 'two blank lines'],
    [/^\s|\s$/, 'leading or trailing white space'],
    [/""|«»|\(\)|\[\]/, 'empty brackets or quotes'],
    [/ [.,:;]/, 'a space before punctuation'],
    [/#(?=\s|$)/m, 'a # without a number'],
    [/\b(by|from|into|in|on|of|with|в|от)[.,:]?$/m, 'a line ends in a preposition'],
    [/(—|:)$/, 'the text ends in a colon or dash'],
    [/ — $|—$/m, 'a dash with nothing after it'],
  ];
  return checks.find(([re]) => re.test(text))?.[1];
}

t.test('every GitHub example delivery is accepted and renders without undefined, null or stray tags', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: plugins('@herald/provider-codehost') });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const en = await recorder(s, sink.url, 'EN', 'en');
  const ru = await recorder(s, sink.url, 'RU', 'ru');
  const { tracker, hook } = await chain(s, {
    provider: { kind: 'codehost', name: 'GitHub', config: { host: 'github', webhook_secret: SECRET } },
    target: en,
  });
  await link(s, tracker.id, ru.id);

  const all = cases();
  t.ok(all.length >= 400, `${all.length} distinct deliveries`);
  const byEvent = new Map<string, Case>();
  let mapped = 0;
  // A few at a time, as GitHub delivers: the order between deliveries does not matter here.
  const results: { c: Case; status: number; body: any }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < all.length) {
        const c = all[next++]!;
        const raw = JSON.stringify(c.body);
        const r = await s.request('POST', hook, {
          raw,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'GitHub-Hookshot/044aadd',
            'x-github-event': c.event,
            'x-github-delivery': crypto.randomUUID(),
            'x-github-hook-id': '292430182',
            'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', SECRET).update(raw).digest('hex')}`,
          },
        });
        results.push({ c, status: r.status, body: r.body });
      }
    }),
  );
  for (const { c, status, body } of results) {
    if (c.expect) {
      mapped++;
      if (status !== 202 || body?.event_ids?.length !== 1) {
        t.fail(`${c.label}: expected 202 with one ${c.expect} event, got ${status} ${JSON.stringify(body)}`);
        continue;
      }
      byEvent.set(body.event_ids[0], c);
    } else {
      const ok =
        status === 200 &&
        (c.event === 'ping' ? body?.ok === true : body?.ignored === true && typeof body.reason === 'string') &&
        !body.event_ids?.length;
      if (!ok) t.fail(`${c.label}: expected 200 acknowledged without an event, got ${status} ${JSON.stringify(body)}`);
    }
  }
  t.pass(
    `${results.length} deliveries answered: ${mapped} with an event, ${results.length - mapped} acknowledged ` +
      'without one',
  );
  t.ok(mapped >= 25, 'a good share of them map to events');
  t.same(new Set(results.map((r) => r.status)), new Set([200, 202]), 'no 4xx or 5xx among them');

  await relayOf(s).tick();
  t.equal(sink.received.length, 2 * mapped, 'each event reaches both targets');
  const types = new Set<string>();
  for (const { body: m } of sink.received) {
    const c = byEvent.get(m.eventId);
    if (!c) {
      t.fail(`a message for an unknown event ${m.eventId}`);
      continue;
    }
    if (m.eventType !== c.expect) t.fail(`${c.label}: event type ${m.eventType}, expected ${c.expect}`);
    types.add(m.eventType);
    for (const field of ['title', 'body', 'plainTitle', 'plainBody'] as const) {
      const text = String(m[field]);
      if (LEAKS.test(text) || !text.trim()) t.fail(`${c.label} (${m.locale}) ${field}: ${JSON.stringify(text)}`);
    }
    for (const field of ['plainTitle', 'plainBody'] as const) {
      const flaw = blemish(String(m[field]));
      if (flaw) t.fail(`${c.label} (${m.locale}) ${field}: ${flaw} in ${JSON.stringify(m[field])}`);
    }
  }
  t.same(
    [...types].sort(),
    [
      'issue_closed',
      'issue_comment',
      'issue_opened',
      'pull_request_closed',
      'pull_request_merged',
      'pull_request_opened',
      'push',
      'release_published',
      'workflow_run_failed',
    ],
    'every event type was rendered',
  );
  t.same(new Set(sink.received.map((r) => r.body.locale)), new Set(['en', 'ru']), 'in both locales');
});
