/**
 * The plain-text variant and the redacted payload of a rendered message are computed when read, once,
 * and every reader and every copy (spread, JSON, structured clone, a worker's message port) sees the
 * values an eager render gives.
 */
import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import type { MessageFormat, OutboundMessage, TargetLimits } from '../../core/src/plugin-api/index.ts';
import { loadPlugins } from '../../core/src/plugins/loader.ts';
import { fitMessage } from '../../core/src/relay/pipeline/fit.ts';
import { type RenderInput, type RenderReport, renderMessage } from '../../core/src/relay/pipeline/render.ts';
import { TemplateCatalog } from '../../core/src/relay/templates/catalog.ts';

const catalog = new TemplateCatalog(await loadPlugins(['@herald/provider-codehost']), '/nonexistent');

/** A payload whose `probe.n` counts its reads: each template render of `{{probe.n}}` and the payload copy read it. */
function probed() {
  const reads = { n: 0 };
  const payload = {
    name: 'a*b <c> & d',
    token: 's3cret',
    url: 'https://example.test/x',
    probe: {
      get n() {
        reads.n++;
        return 'N';
      },
    },
  };
  return { reads, payload };
}

const OVERRIDE = { title: 'T {{name}} {{probe.n}}', body: 'B {{name}}\n*{{probe.n}}*' };

function input(payload: Record<string, unknown>, format: MessageFormat, more: Partial<RenderInput> = {}): RenderInput {
  return {
    deliveryId: 'd1',
    eventId: 'e1',
    eventType: 'push',
    severity: 'info',
    locale: 'en',
    payload,
    extras: { note: 'password=hunter22' },
    providerKind: 'codehost',
    providerName: 'gh',
    targetName: 'chat',
    occurredAt: '2026-01-05T09:02:11.000Z',
    formats: [format],
    override: OVERRIDE,
    ...more,
  };
}

/** A code-host push as the provider stores it (what the relay bench sends, normalized). */
function push(): Record<string, unknown> {
  return {
    repository: 'octo-org/herald-bench',
    repository_url: 'https://github.com/octo-org/herald-bench',
    sender: 'monalisa',
    ref: 'refs/heads/main',
    branch: 'main',
    pusher: 'monalisa',
    commits: [
      { id: 'a'.repeat(40), short_id: 'aaaaaaa', message: 'Tune *the* relay_hot path', author: 'Mona', url: 'u' },
    ],
    commit_count: 1,
    compare_url: 'https://github.com/octo-org/herald-bench/compare/1a2b...3c4d',
    forced: false,
    api_token: 'ghp_secret',
  };
}

/** A message's keys, in the order the contract lists them (and JSON and spreads keep). */
const KEYS = [
  'deliveryId',
  'eventId',
  'eventType',
  'severity',
  'locale',
  'format',
  'title',
  'body',
  'plainTitle',
].concat(['plainBody', 'url', 'provider', 'occurredAt', 'payload']);

/** The format a case's name starts with. */
const formatOf = (name: string) => name.split(' ')[0] as MessageFormat;

/** The message as plain data, keys in order (what JSON, a spread and a clone must all give). */
const data = (m: OutboundMessage) => JSON.parse(JSON.stringify(m)) as Record<string, unknown>;

t.test('nothing renders the plain text or copies the payload until it is read; then once', async (t) => {
  const { reads, payload } = probed();
  const m = renderMessage(catalog, input(payload, 'markdown'));
  t.equal(reads.n, 2, 'the formatted title and body only');
  t.equal(m.title, 'T a\\*b \\<c\\> & d N');
  t.equal(m.body, 'B a\\*b \\<c\\> & d\n*N*');
  t.equal(reads.n, 2);

  t.equal(m.plainTitle, 'T a*b <c> & d N', 'the template rendered as plain text');
  t.equal(reads.n, 3, 'the plain title rendered on first read');
  t.equal(m.plainBody, 'B a*b <c> & d\n*N*');
  t.equal(reads.n, 4, 'the plain body rendered on first read');
  t.equal(m.plainTitle + m.plainBody, 'T a*b <c> & d NB a*b <c> & d\n*N*');
  t.equal(reads.n, 4, 'and never again');

  const copy = m.payload!;
  t.equal(reads.n, 5, 'the payload copied on first read');
  t.strictSame(copy, { name: 'a*b <c> & d', token: '[REDACTED]', url: 'https://example.test/x', probe: { n: 'N' } });
  t.not(copy, payload, 'a copy, not the event payload itself');
  t.equal(m.payload, copy, 'the same copy on every read');
  t.strictSame({ ...m }, data(m));
  t.equal(reads.n, 5, 'copies read the values already computed');
});

t.test('a lazy message equals an eager render, to every reader and every copy', async (t) => {
  const cases: [string, () => RenderInput][] = [];
  for (const format of ['markdown', 'html', 'text'] as const) {
    for (const test of [false, true]) {
      cases.push([`${format}${test ? ' test' : ''} override`, () => input(probed().payload, format, { test })]);
      cases.push([`${format}${test ? ' test' : ''} push`, () => input(push(), format, { test, override: undefined })]);
    }
  }
  for (const [name, make] of cases) {
    // With a report, renderMessage renders everything before it returns: today's eager render.
    const eager = renderMessage(catalog, make(), {});
    const want = data(eager);
    t.ok(want.plainBody && want.payload, `${name}: the eager render has the plain text and the payload`);
    t.equal(Object.getPrototypeOf(renderMessage(catalog, make())), Object.prototype, `${name}: a plain object`);
    t.strictSame(Object.keys(renderMessage(catalog, make())), KEYS.concat(name.includes('test') ? ['test'] : []), name);
    t.strictSame(data(renderMessage(catalog, make())), want, `${name}: JSON`);
    t.strictSame({ ...renderMessage(catalog, make()) }, { ...eager }, `${name}: a spread`);
    t.strictSame(
      structuredClone(renderMessage(catalog, make())),
      structuredClone(eager),
      `${name}: a structured clone`,
    );
    const read = renderMessage(catalog, make());
    const fields = [read.plainTitle, read.plainBody, read.payload, read.title, read.body];
    t.strictSame(fields, [eager.plainTitle, eager.plainBody, eager.payload, eager.title, eager.body], `${name}: reads`);
    t.strictSame({ ...read }, { ...eager }, `${name}: a spread after reads`);
    const all: TargetLimits[] = [
      { maxMessageLength: 20, maxTitleLength: 8, formats: [formatOf(name)] },
      { maxMessageLength: 20, overflow: 'split', formats: [formatOf(name)] },
      { maxMessageLength: 4000, maxTitleLength: 256, overflow: 'plugin', formats: [formatOf(name)] },
    ];
    for (const limits of all) {
      const lazyParts = fitMessage(renderMessage(catalog, make()), limits).map((p) => ({ ...p }));
      t.strictSame(
        lazyParts,
        fitMessage(eager, limits).map((p) => ({ ...p })),
        `${name}: fitted ${JSON.stringify(limits)}`,
      );
    }
  }
});

t.test("a message posted to the dispatch thread's port arrives with the same values", async (t) => {
  const eager = renderMessage(catalog, input(push(), 'markdown', { override: undefined }), {});
  const { port1, port2 } = new MessageChannel();
  const got = new Promise<unknown>((resolve) => port2.once('message', resolve));
  port1.postMessage(renderMessage(catalog, input(push(), 'markdown', { override: undefined })));
  t.strictSame(await got, { ...eager });
  port1.close();
});

t.test('a report is complete when renderMessage returns (the plain text is rendered then)', async (t) => {
  const { reads, payload } = probed();
  const report: RenderReport = {};
  renderMessage(catalog, input(payload, 'html'), report);
  t.equal(reads.n, 4, 'formatted and plain title and body rendered before returning');
  t.equal(report.exceeded, undefined);

  // A body past the steps limit: reported by the render that reaches it first, as before.
  const long = { items: Array.from({ length: 200 }, (_, i) => ({ v: i })) };
  const heavy = { title: 'x', body: '{{#each items}}{{#each items}}{{v}}{{/each}}{{/each}}' };
  const r2: RenderReport = {};
  const m = renderMessage(catalog, input({ ...long, items2: long.items }, 'markdown', { override: heavy }), r2);
  t.equal(r2.exceeded, 'steps');
  t.match(m.plainBody, /…$/);
});

t.test('a message behaves as one with plain properties', async (t) => {
  const m = renderMessage(catalog, input(probed().payload, 'markdown'));
  m.plainBody = 'set';
  t.equal(m.plainBody, 'set', 'assignable before the first read');
  m.payload = undefined;
  t.equal(m.payload, undefined, 'undefined stays undefined');
  t.equal(JSON.stringify({ ...m }).includes('"plainBody":"set"'), true);
  const child = Object.create(m) as OutboundMessage;
  t.equal(child.plainTitle, 'T a*b <c> & d N', 'read through an object that inherits it');
  child.plainTitle = 'own';
  t.equal(child.plainTitle, 'own');
  t.equal(m.plainTitle, 'T a*b <c> & d N', 'assigning through the inheriting object leaves the message alone');
  t.strictSame(Object.keys(m), Object.keys({ ...m }));
  const frozen = Object.freeze(renderMessage(catalog, input(probed().payload, 'html')));
  t.equal(frozen.plainBody, 'B a*b <c> & d\n*N*', 'a frozen message still reads');
});
