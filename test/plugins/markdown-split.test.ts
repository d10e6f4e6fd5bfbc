/**
 * Markdown and message fitting as a plugin author meets them: a split Markdown message's parts carry
 * a plain-text copy without the core's backslash escapes, no cut falls between a `\` and the
 * character it escapes, and the contract's test host fits `message()` to the manifest's limits
 * the way the pipeline does, so an author can test a long body.
 */

import { defineTarget, type OutboundMessage, type TargetLimits, Type } from '@herald/plugin-api';
import { createTestHost } from '@herald/plugin-api/testing';
import t from 'tap';
import { fitMessage, splitFormatted } from '../../core/src/relay/pipeline/fit.ts';
import { escapeFor } from '../../core/src/relay/templates/engine.ts';

/** The characters the core escapes for Markdown (engine.ts escapeFor). */
const ESCAPED = '\\`*_{}[]()#+-.!|>~<';

/** True when `s` ends inside an escape: an odd number of backslashes at its end. */
const endsMidEscape = (s: string): boolean => (/\\+$/.exec(s)?.[0].length ?? 0) % 2 === 1;

const msg = (o: Partial<OutboundMessage>): OutboundMessage => ({
  deliveryId: 'd1',
  eventId: 'e1',
  eventType: 'x',
  severity: 'info',
  locale: 'en',
  format: 'markdown',
  title: 'Title',
  body: '',
  plainTitle: 'Title',
  plainBody: '',
  ...o,
});

t.test('every character the core escapes for Markdown is one the guide lists', async (t) => {
  for (const c of ESCAPED) t.equal(escapeFor('markdown', c), `\\${c}`, `${c} is escaped`);
  t.equal(escapeFor('markdown', 'plain words 123'), 'plain words 123', 'letters, digits and spaces are not');
});

t.test('a cut never falls between a backslash and the character it escapes', async (t) => {
  // Values full of escapes and no space to cut at: every cut is a hard one.
  const body = escapeFor('markdown', 'v1.2.3-rc.1_(build)!'.repeat(12));
  for (const limit of [7, 8, 9, 10, 11, 13, 50, 51]) {
    const parts = splitFormatted(body, limit, 'markdown');
    t.ok(
      parts.every((p) => p.length <= limit),
      `limit ${limit}: every part fits`,
    );
    t.notOk(parts.some(endsMidEscape), `limit ${limit}: no part ends with a lone backslash`);
    t.equal(parts.join(''), body, `limit ${limit}: nothing lost`);
  }
  const [one] = fitMessage(msg({ body, plainBody: 'v1.2.3-rc.1_(build)!'.repeat(12) }), {
    maxMessageLength: 41,
    formats: ['markdown'],
  });
  t.notOk(
    endsMidEscape(one!.body.slice(0, -1)),
    'a truncated body does not end with a lone backslash before the ellipsis',
  );
});

t.test('the parts of a split Markdown message carry plain text without escapes', async (t) => {
  const words = Array.from({ length: 40 }, (_, i) => `host-${i}.example.net (up)`).join(' ');
  const limits: TargetLimits = { maxMessageLength: 120, formats: ['markdown'], overflow: 'split' };
  const parts = fitMessage(msg({ body: escapeFor('markdown', words), plainBody: words }), limits);
  t.ok(parts.length > 3, `${parts.length} parts`);
  for (const p of parts) {
    t.ok(p.body.includes('\\.'), `part ${p.part!.index}: the Markdown body keeps its escapes`);
    t.notMatch(p.plainBody, /\\[-.()]/, `part ${p.part!.index}: the plain copy has none`);
    t.ok(p.plainBody.length <= 120, `part ${p.part!.index}: the plain copy fits`);
  }
  const plain = parts
    .map((p) => p.plainBody.replace(/\n\n\(part \d+ of \d+\)$/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  t.equal(plain, words, 'the plain copies together are the plain text');
});

const target = (limits: TargetLimits) =>
  defineTarget({
    manifest: {
      id: 'fit_probe',
      kind: 'target',
      apiVersion: 1,
      displayName: 'Fit probe',
      configSchema: Type.Object({}),
      limits,
    },
    create: () => ({ async send() {} }),
  });

t.test('the test host fits message() to the manifest limits, as the pipeline does', async (t) => {
  const host = createTestHost();
  const long = Array.from({ length: 60 }, (_, i) => `line ${i}.`).join('\n');

  const split = await host.target(
    target({ maxMessageLength: 100, maxTitleLength: 10, formats: ['markdown'], overflow: 'split' }),
    {},
  );
  const first = split.message({ title: 'A rather long title', body: escapeFor('markdown', long), plainBody: long });
  t.ok(first.body.length <= 100, 'the body is cut to maxMessageLength');
  t.equal(first.title, 'A rather…', 'the title to maxTitleLength, cut at a space');
  t.equal(first.part?.index, 1, 'message() is the first part');
  const parts = split.parts({ body: escapeFor('markdown', long), plainBody: long });
  t.ok(parts.length > 3 && parts.every((p) => p.body.length <= 100), 'parts() gives every part within the limit');
  t.same(
    parts.map((p) => p.part!.index),
    parts.map((_, k) => k + 1),
  );
  t.match(parts.at(-1)!.body, /\(part \d+ of \d+\)$/);
  t.notMatch(parts[1]!.plainBody, /\\\./, 'plain copies without escapes');
  t.same(
    parts.map((p) => p.deliveryId),
    parts.map((_, k) => (k ? `${parts[0]!.deliveryId}-${k + 1}` : parts[0]!.deliveryId)),
  );

  const truncating = await host.target(target({ maxMessageLength: 50, formats: ['text'] }), {});
  const cut = truncating.message({ body: long });
  t.ok(cut.body.length <= 50 && cut.body.endsWith('…'), 'truncate: one message ending with an ellipsis');
  t.equal(truncating.parts({ body: long }).length, 1);

  const own = await host.target(target({ maxMessageLength: 50, formats: ['text'], overflow: 'plugin' }), {});
  t.equal(own.message({ body: long }).body, long, 'overflow plugin: passed whole, the plugin fits it');

  const short = split.message({ body: 'Short' });
  t.equal(short.body, 'Short');
  t.equal(short.part, undefined, 'a body that fits is one message, not a part');
  t.equal(
    split.message({ body: 'a\\.b' }).plainBody,
    'a.b',
    'a Markdown body given alone gets a plain copy without escapes',
  );
});
