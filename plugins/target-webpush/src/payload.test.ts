/** The push payload: fields, urgency, topic and the 4 KB limit on both sides. */
import crypto from 'node:crypto';
import type { OutboundMessage } from '@herald/plugin-api';
import t from 'tap';
import { decryptPush } from '../test/fakes/push-service.ts';
import plugin from './index.ts';
import {
  buildPayload,
  fitPayload,
  HEADER_BYTES,
  MAX_BODY_BYTES,
  MAX_BODY_LENGTH,
  MAX_PLAINTEXT_BYTES,
  MAX_TITLE_LENGTH,
  topicFor,
  urgencyFor,
} from './payload.ts';

const message = (m: Partial<OutboundMessage> = {}): OutboundMessage => ({
  deliveryId: 'd1',
  eventId: 'e1',
  eventType: 'ups_on_battery',
  severity: 'warning',
  locale: 'en',
  format: 'text',
  title: 'UPS on battery',
  body: 'rack: 80 % charge',
  plainTitle: 'UPS on battery',
  plainBody: 'rack: 80 % charge',
  ...m,
});

t.test('the payload carries what the service worker shows', async (t) => {
  const p = buildPayload(message({ locale: 'ru' }), 'https://h.example/#/events?event=e1', 'e1');
  t.same(p, {
    title: 'UPS on battery',
    body: 'rack: 80 % charge',
    url: 'https://h.example/#/events?event=e1',
    tag: 'e1',
    severity: 'warning',
    lang: 'ru',
  });
  t.same(buildPayload(message({ test: true }), 'u', 't', true), {
    title: 'UPS on battery',
    body: 'rack: 80 % charge',
    url: 'u',
    tag: 't',
    severity: 'warning',
    lang: 'en',
    renotify: true,
    test: true,
  });
});

t.test('urgency follows severity; the topic is a short digest of the tag', async (t) => {
  t.equal(urgencyFor('info'), 'normal');
  t.equal(urgencyFor('warning'), 'high');
  t.equal(urgencyFor('critical'), 'high');
  const topic = topicFor('0197a1b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b');
  t.match(topic, /^[A-Za-z0-9_-]{32}$/, 'RFC 8030: at most 32 base64url characters');
  t.equal(topicFor('0197a1b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b'), topic, 'the same tag, the same topic');
  t.not(topicFor('other'), topic);
});

t.test('the declared limits keep the worst case within one 4 KB record', async (t) => {
  t.equal(MAX_PLAINTEXT_BYTES, MAX_BODY_BYTES - HEADER_BYTES - 17, '4096 minus the header, the delimiter and the tag');
  t.same(plugin.manifest.limits, {
    maxMessageLength: MAX_BODY_LENGTH,
    maxTitleLength: MAX_TITLE_LENGTH,
    formats: ['text'],
    overflow: 'truncate',
    concurrency: 4,
  });
  // Characters of three UTF-8 bytes each, at both declared limits, with an event URL of a usual length.
  const p = buildPayload(
    message({ plainTitle: '界'.repeat(MAX_TITLE_LENGTH), plainBody: '界'.repeat(MAX_BODY_LENGTH) }),
    `https://herald.example.net/#/events?event=${crypto.randomUUID()}`,
    crypto.randomUUID(),
  );
  t.ok(Buffer.byteLength(JSON.stringify(p)) <= MAX_PLAINTEXT_BYTES, 'fits without cutting');
  t.equal(fitPayload(p).cut, 0);
});

t.test('fitPayload: at the limit nothing is cut, one byte over the body is cut', async (t) => {
  const base = { ...buildPayload(message(), 'https://h.example/#/events?event=e1', 'e1'), body: '' };
  const room = MAX_PLAINTEXT_BYTES - Buffer.byteLength(JSON.stringify(base));
  const exact = { ...base, body: 'a'.repeat(room) };
  t.equal(Buffer.byteLength(JSON.stringify(exact)), MAX_PLAINTEXT_BYTES);
  t.same(fitPayload(exact), { payload: exact, cut: 0 }, 'exactly at the limit: as it is');
  const over = { ...base, body: 'a'.repeat(room + 1) };
  const fitted = fitPayload(over);
  t.ok(Buffer.byteLength(JSON.stringify(fitted.payload)) <= MAX_PLAINTEXT_BYTES, 'fitted within the limit');
  t.match(fitted.payload.body, /^a+…$/, 'ends with an ellipsis');
  t.ok(fitted.cut >= 1, `${fitted.cut} characters cut`);
  t.equal(fitted.payload.title, base.title, 'the title stays');
});

t.test(
  'fitPayload: control characters (six bytes each in JSON) are cut too, never inside a surrogate pair',
  async (t) => {
    const p = buildPayload(message({ plainBody: '\u0001'.repeat(900) + '😀'.repeat(200) }), 'u', 'e1');
    const { payload } = fitPayload(p);
    t.ok(Buffer.byteLength(JSON.stringify(payload)) <= MAX_PLAINTEXT_BYTES);
    t.notMatch(payload.body, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no lone high surrogate');
    const huge = fitPayload({ ...p, body: '', title: '\u0001'.repeat(2000) });
    t.ok(
      Buffer.byteLength(JSON.stringify(huge.payload)) <= MAX_PLAINTEXT_BYTES,
      'the title is cut when the body is not enough',
    );
  },
);

t.test('web-push encrypts the largest payload into exactly 4096 bytes, and one byte more overflows', async (t) => {
  const webpush = (await import('web-push')).default;
  const ua = crypto.createECDH('prime256v1');
  ua.generateKeys();
  const auth = crypto.randomBytes(16);
  const sub = {
    endpoint: 'https://push.example/x',
    keys: { p256dh: ua.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
  };
  const keys = webpush.generateVAPIDKeys();
  const vapidDetails = { subject: 'mailto:a@example.test', ...keys };
  const at = webpush.generateRequestDetails(sub, 'x'.repeat(MAX_PLAINTEXT_BYTES), { vapidDetails });
  t.equal(at.body!.length, MAX_BODY_BYTES, 'the largest plaintext makes a 4096-byte body');
  t.equal(
    decryptPush(at.body!, { ecdh: ua, publicKey: ua.getPublicKey(), auth }),
    'x'.repeat(MAX_PLAINTEXT_BYTES),
    'and decrypts to it',
  );
  const over = webpush.generateRequestDetails(sub, 'x'.repeat(MAX_PLAINTEXT_BYTES + 1), { vapidDetails });
  t.equal(over.body!.length, MAX_BODY_BYTES + 1);
});
