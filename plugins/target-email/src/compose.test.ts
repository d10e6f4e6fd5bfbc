import type { OutboundMessage } from '@herald/plugin-api';
import t from 'tap';
import { composeMail, subjectOf } from './compose.ts';
import { effectivePort } from './config.ts';

const msg = (m: Partial<OutboundMessage> = {}): OutboundMessage => ({
  deliveryId: 'd-1',
  eventId: 'e',
  eventType: 'test',
  severity: 'info',
  locale: 'en',
  format: 'html',
  title: 'Title',
  body: 'Body',
  plainTitle: 'Title',
  plainBody: 'Body',
  ...m,
});
const cfg = { from: 'Herald <herald@example.org>', to: ['a@example.org'] };

t.test('subject: prefix plus the plain title, one line, bounded', async (t) => {
  t.equal(subjectOf({ subject_prefix: '[H]' }, msg()), '[H] Title');
  t.equal(
    subjectOf({}, msg({ plainTitle: 'a\r\nBcc: evil@example.org' })),
    'a Bcc: evil@example.org',
    'a line break cannot start a header',
  );
  t.equal(subjectOf({}, msg({ plainTitle: '', plainBody: '\nFirst line\nsecond' })), 'First line');
  t.equal(subjectOf({}, msg({ plainTitle: '', plainBody: '' })), 'Herald notification');
  const long = subjectOf({}, msg({ plainTitle: 'x'.repeat(500) }));
  t.equal(long.length, 200);
  t.ok(long.endsWith('…'));
});

t.test('text part is title, body and link; HTML part keeps the rendered HTML', async (t) => {
  const m = composeMail(
    cfg,
    msg({
      title: 'A &amp; B',
      body: '<b>x</b>',
      plainTitle: 'A & B',
      plainBody: 'x',
      url: 'https://h.example/e/1?a=1&b=2',
    }),
  );
  t.equal(m.text, 'A & B\n\nx\n\nhttps://h.example/e/1?a=1&b=2\n');
  t.match(m.html, '<h2 style="margin: 0 0 12px;">A &amp; B</h2>');
  t.match(m.html, '<div style="white-space: pre-wrap;"><b>x</b></div>');
  t.match(m.html, '<a href="https://h.example/e/1?a=1&amp;b=2">');
  t.equal(m.messageId, '<d-1.herald@example.org>');
  t.equal(m.priority, 'normal');
});

t.test('a link already in the body is not repeated; plain-format input is escaped', async (t) => {
  const m = composeMail(
    cfg,
    msg({
      format: 'text',
      title: '<x>',
      body: 'see https://h.example',
      plainBody: 'see https://h.example',
      url: 'https://h.example',
    }),
  );
  t.equal(m.text.match(/https:\/\/h\.example/g)?.length, 1);
  t.match(m.html, '<h2 style="margin: 0 0 12px;">&lt;x&gt;</h2>');
  t.notMatch(m.html, '<a href');
});

t.test('port follows the security mode unless set', async (t) => {
  t.equal(effectivePort({ security: 'starttls' }), 587);
  t.equal(effectivePort({ security: 'tls' }), 465);
  t.equal(effectivePort({ security: 'none' }), 587);
  t.equal(effectivePort({ security: 'tls', port: 2465 }), 2465);
});
