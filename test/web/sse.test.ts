/** The client's server-sent events parser (core/web/src/lib/sse.ts), fed the way a network delivers. */
import t from 'tap';
import { type SseEvent, SseParser } from '../../core/web/src/lib/sse.ts';

const parse = (chunks: string[]) => {
  const out: SseEvent[] = [];
  const p = new SseParser((e) => out.push(e));
  for (const c of chunks) p.feed(c);
  return out;
};

t.test('the service stream: events, data, keep-alive comments', async (t) => {
  const stream =
    'event: start\ndata: {"a":1}\n\n: keep-alive\n\n' +
    'event: delta\ndata: {"content":"Hel"}\n\nevent: delta\ndata: {"content":"lo"}\n\nevent: done\ndata: {}\n\n';
  const events = parse([stream]);
  t.same(
    events.map((e) => e.event),
    ['start', 'delta', 'delta', 'done'],
  );
  t.same(
    events
      .map((e) => JSON.parse(e.data).content)
      .filter(Boolean)
      .join(''),
    'Hello',
  );
});

t.test('frames split anywhere, across chunks, give the same events', async (t) => {
  const stream = 'event: delta\r\ndata: {"content":"x y"}\r\n\r\nevent: tool\ndata: {"name":"r"}\n\n';
  const whole = parse([stream]);
  t.equal(whole.length, 2);
  for (let i = 1; i < stream.length; i++) t.same(parse([stream.slice(0, i), stream.slice(i)]), whole, `split at ${i}`);
  t.same(parse(stream.split('')), whole, 'one character at a time');
});

t.test('field rules', async (t) => {
  t.same(
    parse(['data: a\ndata: b\n\n']),
    [{ event: 'message', data: 'a\nb' }],
    'data lines join; no event name means "message"',
  );
  t.same(
    parse(['data:no-space\n\n']),
    [{ event: 'message', data: 'no-space' }],
    'the space after the colon is optional',
  );
  t.same(parse(['event: x\n\n']), [], 'an event without data is not dispatched');
  t.same(
    parse(['event: x\ndata: 1\r\rdata: 2\r\r']),
    [
      { event: 'x', data: '1' },
      { event: 'message', data: '2' },
    ],
    'bare CR line ends',
  );
  t.same(parse(['event: x\ndata: partial']), [], 'an unfinished event at the end is not dispatched');
});
