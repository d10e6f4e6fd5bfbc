import { PassThrough } from 'node:stream';
import t from 'tap';
import { ModelStream, ModelStreamError, readableSource } from './model-stream.ts';

const chunk = (content: string) => {
  const choices = [{ index: 0, delta: { content }, finish_reason: null }];
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices })}\n\n`;
};

/** A stream over a PassThrough body, the chunks' contents collected as they come. */
function setup(signal = new AbortController().signal) {
  const body = new PassThrough();
  const stream = new ModelStream(readableSource(body), signal);
  const seen: string[] = [];
  const done = stream.each((c) => {
    seen.push(c.choices[0]?.delta?.content ?? '');
  });
  return { body, stream, seen, done };
}

t.test('chunks are handed on as they arrive; [DONE] ends the stream and what follows is ignored', async (t) => {
  const { body, seen, done } = setup();
  body.write(chunk('Hel'));
  body.write(chunk('lo').slice(0, 10));
  await new Promise((r) => setImmediate(r));
  t.same(seen, ['Hel'], 'a chunk is delivered before the stream ends');
  body.write(chunk('lo').slice(10));
  body.write(': keep-alive\n\n');
  body.write('data: {"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n');
  body.write('data: [DONE]\n\n');
  body.write(chunk('after'));
  await done;
  t.same(seen, ['Hel', 'lo', ''], 'the usage chunk comes through; nothing after [DONE]');
  body.end();
});

t.test('a body that ends without [DONE] still resolves after its last chunk', async (t) => {
  const { body, seen, done } = setup();
  body.end(chunk('only').trimEnd());
  await done;
  t.same(seen, ['only']);
});

t.test('malformed JSON is an error and stops the body', async (t) => {
  const { body, done } = setup();
  body.write('data: {"id": "c1", "choices": [\n\n');
  await t.rejects(done, { name: 'SyntaxError', message: /malformed server-sent event JSON/ });
  t.ok(body.destroyed, 'the body is destroyed');
});

t.test('an error payload becomes a ModelStreamError with the message the SDK would give', async (t) => {
  const a = setup();
  a.body.write(chunk('partial'));
  a.body.write(
    'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}\n\n',
  );
  await t.rejects(a.done, {
    name: 'ModelStreamError',
    message: 'The server had an error while processing your request.',
  });
  t.same(a.seen, ['partial']);
  t.ok(a.body.destroyed);

  const b = setup();
  b.body.write('event: error\ndata: {"message":"overloaded","code":529}\n\n');
  const err = await b.done.catch((e: unknown) => e);
  t.ok(err instanceof ModelStreamError);
  t.equal((err as Error).message, 'overloaded', 'an `error` event without an `error` key uses the payload itself');
  t.same((err as ModelStreamError).error, { message: 'overloaded', code: 529 });

  const c = setup();
  c.body.write('data: {"error":{"code":"x"}}\n\n');
  await t.rejects(c.done, { message: '{"code":"x"}' }, 'an error without a message is shown as JSON');
});

t.test('an abort rejects with an AbortError at once and destroys the body', async (t) => {
  const ctl = new AbortController();
  const { body, seen, done } = setup(ctl.signal);
  body.write(chunk('one'));
  await new Promise((r) => setImmediate(r));
  ctl.abort();
  await t.rejects(done, { name: 'AbortError' });
  t.same(seen, ['one']);
  t.ok(body.destroyed);
});

t.test('an already aborted signal rejects before reading', async (t) => {
  const ctl = new AbortController();
  ctl.abort();
  const { body, done } = setup(ctl.signal);
  await t.rejects(done, { name: 'AbortError' });
  t.ok(body.destroyed);
});

t.test('a transport failure rejects with its error; a closed body without an end is an error too', async (t) => {
  const a = setup();
  a.body.write(chunk('x'));
  a.body.destroy(new Error('socket hang up'));
  await t.rejects(a.done, { message: 'socket hang up' });

  const b = setup();
  b.body.destroy();
  await t.rejects(b.done, { message: /closed before it ended/ });
});

t.test('a throwing callback fails the stream; a stream is read once', async (t) => {
  const body = new PassThrough();
  const stream = new ModelStream(readableSource(body), new AbortController().signal);
  const done = stream.each(() => {
    throw new Error('sink failed');
  });
  body.write(chunk('x'));
  await t.rejects(done, { message: 'sink failed' });
  t.ok(body.destroyed);
  await t.rejects(
    stream.each(() => {}),
    { message: /read once/ },
  );
});
