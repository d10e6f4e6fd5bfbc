import t from 'tap';
import type { MessageFormat, OutboundMessage, TargetLimits } from '../../plugin-api/index.ts';
import { fitMessage, splitFormatted, truncateFormatted } from './fit.ts';

const msg = (body: string, o: Partial<OutboundMessage> = {}): OutboundMessage => ({
  deliveryId: 'd1',
  eventId: 'e1',
  eventType: 'x',
  severity: 'info',
  locale: 'en',
  format: 'text',
  title: 'Title',
  body,
  plainTitle: 'Title',
  plainBody: body,
  ...o,
});
const limits = (o: Partial<TargetLimits>): TargetLimits => ({ maxMessageLength: 100, formats: ['text'], ...o });
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

/** Tags balanced: every open has its close, in order. */
function balanced(html: string): boolean {
  const stack: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-z][a-z0-9]*)[^>]*>/gi)) {
    if (m[1]) {
      if (stack.pop() !== m[2]) return false;
    } else stack.push(m[2]!);
  }
  return stack.length === 0;
}

t.test('a message that fits is passed through untouched', async (t) => {
  const m = msg('short');
  t.same(fitMessage(m, limits({})), [m]);
  t.same(fitMessage(m, undefined), [m]);
});

t.test('truncate (the default) cuts at a space and ends with an ellipsis', async (t) => {
  const [out, more] = fitMessage(msg(words(40)), limits({}));
  t.equal(more, undefined);
  t.ok(out!.body.length <= 100);
  t.ok(out!.body.endsWith('…'));
  t.match(out!.body, /word\d+…$/, 'a whole word before the ellipsis');
  t.ok(out!.plainBody.length <= 100);
});

t.test('titles are cut to maxTitleLength with an ellipsis', async (t) => {
  const [out] = fitMessage(
    msg('b', { title: 'x'.repeat(50), plainTitle: 'x'.repeat(50) }),
    limits({ maxTitleLength: 10 }),
  );
  t.equal(out!.title, `${'x'.repeat(9)}…`);
  t.equal(out!.plainTitle.length, 10);
});

t.test('split sends parts in order, each within the limit and marked, ids distinct', async (t) => {
  const body = words(60);
  const parts = fitMessage(msg(body), limits({ overflow: 'split' }));
  t.ok(parts.length >= 5);
  parts.forEach((p, k) => {
    t.ok(p.body.length <= 100, `part ${k + 1} is ${p.body.length} long`);
    t.ok(p.body.endsWith(`(part ${k + 1} of ${parts.length})`));
    t.same(p.part, { index: k + 1, count: parts.length });
  });
  t.same(
    parts.map((p) => p.deliveryId),
    parts.map((_, k) => (k ? `d1-${k + 1}` : 'd1')),
  );
  const joined = parts
    .map((p) => p.body.replace(/\n\n\(part \d+ of \d+\)$/, ''))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  t.equal(joined, body, 'nothing lost between the parts');
});

t.test('the part marker follows the target locale', async (t) => {
  const parts = fitMessage(msg(words(40), { locale: 'ru' }), limits({ overflow: 'split' }));
  t.match(parts[0]!.body, /\(часть 1 из \d\)$/);
});

t.test('html: cuts never break a tag or entity, and open tags are closed and reopened', async (t) => {
  const body =
    `<b>${'alpha &amp; beta '.repeat(10)}</b> <a href="https://example.org/x?a=1&amp;b=2">link text here</a> ` +
    `${'<i>gamma</i> '.repeat(10)}`;
  for (const limit of [37, 50, 64, 100]) {
    const parts = splitFormatted(body, limit, 'html');
    for (const p of parts) {
      t.ok(p.length <= limit, `${p.length} <= ${limit}`);
      t.ok(balanced(p), `balanced: ${p}`);
      t.notMatch(p, /&[a-z]*$|&[a-z]*[^a-z;]/i, 'no broken entity');
      t.notMatch(p, /<[^>]*$/, 'no broken tag');
    }
    t.match(parts[1]!, /^<b>/, 'the bold element goes on in the next part');
  }
  const cut = truncateFormatted(body, 60, 'html');
  t.ok(cut.length <= 60);
  t.ok(balanced(cut));
  t.ok(cut.endsWith('…'));
});

t.test('markdown: a code fence open at the cut is closed and reopened', async (t) => {
  const body = `Intro line\n\`\`\`js\n${'const x = 1;\n'.repeat(20)}\`\`\`\nafter`;
  const parts = splitFormatted(body, 80, 'markdown');
  for (const p of parts) {
    t.ok(p.length <= 80);
    t.equal((p.match(/^```/gm) ?? []).length % 2, 0, `fences balanced in: ${JSON.stringify(p)}`);
  }
});

t.test('never longer than the limit, whatever the input', async (t) => {
  const inputs = [
    '😀'.repeat(80),
    `<b>${'x'.repeat(300)}</b>`,
    'a'.repeat(1000),
    '<i><b><u>deep</u></b></i>'.repeat(20),
  ];
  const bad: string[] = [];
  for (const format of ['text', 'markdown', 'html'] as MessageFormat[]) {
    for (const s of inputs) {
      for (const limit of [1, 3, 17, 100]) {
        for (const p of splitFormatted(s, limit, format))
          if (p.length > limit) bad.push(`${format} split ${limit}: ${p}`);
        const cut = truncateFormatted(s, limit, format);
        if (cut.length > limit || /[\ud800-\udbff]$/.test(cut)) bad.push(`${format} truncate ${limit}: ${cut}`);
      }
      for (const overflow of ['truncate', 'split'] as const) {
        for (const p of fitMessage(msg(s, { format }), limits({ overflow, maxMessageLength: 40 }))) {
          if (p.body.length > 40 || p.plainBody.length > 40) bad.push(`${format} ${overflow}: ${p.body}`);
        }
      }
    }
  }
  t.same(bad, []);
});

t.test('plugin overflow leaves the body to the plugin', async (t) => {
  const m = msg('x'.repeat(500));
  t.same(fitMessage(m, limits({ overflow: 'plugin' })), [m]);
});
