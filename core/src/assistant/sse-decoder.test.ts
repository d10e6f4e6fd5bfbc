import t from 'tap';
import { SseDecoder } from './sse-decoder.ts';

type Ev = [data: string, event: string | undefined];

/** Decodes `chunks` in order and returns the events, ending the stream when `end` is set. */
function decode(chunks: Buffer[], end = true): Ev[] {
  const out: Ev[] = [];
  const d = new SseDecoder((data, event) => {
    out.push([data, event]);
  });
  for (const c of chunks) d.push(c);
  if (end) d.end();
  return out;
}

/** Every way of cutting `bytes` in two, and in three around each cut. */
function splits(bytes: Buffer): Buffer[][] {
  const out: Buffer[][] = [];
  for (let i = 0; i <= bytes.length; i++) {
    out.push([bytes.subarray(0, i), bytes.subarray(i)]);
    if (i > 0 && i < bytes.length)
      out.push([bytes.subarray(0, i - 1), bytes.subarray(i - 1, i + 1), bytes.subarray(i + 1)]);
  }
  return out;
}

const sample = Buffer.from(
  [
    '\uFEFF: a comment first\n',
    'data: {"a":1}\n\n',
    'event: message\r\ndata: {"b":"привет, мир 🙂"}\r\n\r\n',
    'data: first line\rdata:second line\r\r',
    'id: 7\nretry: 1000\nunknown: field\ndata\n\n',
    ': keep-alive\n\n',
    'event: error\ndata: {"error":{"message":"boom"}}\n\n',
    'event: lonely\n\n',
    'data: [DONE]\n\n',
  ].join(''),
  'utf8',
);

const expected: Ev[] = [
  ['{"a":1}', undefined],
  ['{"b":"привет, мир 🙂"}', 'message'],
  ['first line\nsecond line', undefined],
  ['', undefined],
  ['{"error":{"message":"boom"}}', 'error'],
  ['[DONE]', undefined],
];

t.test('whole stream: fields, line ends, comments and events', async (t) => {
  t.same(decode([sample]), expected);
});

t.test('split at every byte boundary (in two and three pieces) gives the same events', async (t) => {
  let bad = 0;
  for (const parts of splits(sample)) {
    const got = decode(parts);
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      bad++;
      t.same(got, expected, `split ${parts.map((p) => p.length).join('+')}`);
    }
  }
  t.equal(bad, 0, 'no split changed the events');
});

t.test('one byte at a time gives the same events', async (t) => {
  t.same(decode([...sample].map((b) => Buffer.from([b]))), expected);
});

t.test('CRLF split between CR and LF is one line end, not two', async (t) => {
  t.same(decode([Buffer.from('data: x\r'), Buffer.from('\ndata: y\r'), Buffer.from('\n\r'), Buffer.from('\n')]), [
    ['x\ny', undefined],
  ]);
});

t.test('multi-line data joins with newlines; one leading space is dropped, not more', async (t) => {
  t.same(decode([Buffer.from('data:a\ndata:  b\ndata: \ndata: c\n\n')]), [['a\n b\n\nc', undefined]]);
});

t.test('an event is delivered only when its blank line arrives, or at the end of the stream', async (t) => {
  const events: string[] = [];
  const d = new SseDecoder((data) => {
    events.push(data);
  });
  d.push(Buffer.from('data: one\n'));
  t.same(events, [], 'not before the blank line');
  d.push(Buffer.from('\ndata: two'));
  t.same(events, ['one']);
  d.end();
  t.same(events, ['one', 'two'], 'a last event the server did not terminate still comes at the end');
  t.same(decode([Buffer.from('data: partial')], false), [], 'nothing before the end');
});

t.test('comments, unknown fields and events without data are not delivered', async (t) => {
  t.same(decode([Buffer.from(': only a comment\n\nevent: x\n\nid: 1\n\nretry: 5\n\n')]), []);
});

t.test('a throwing handler stops push at that event', async (t) => {
  const seen: string[] = [];
  const d = new SseDecoder((data) => {
    seen.push(data);
    if (data === 'bad') throw new Error('stop');
  });
  t.throws(() => d.push(Buffer.from('data: ok\n\ndata: bad\n\ndata: after\n\n')), /stop/);
  t.same(seen, ['ok', 'bad']);
});
