import net from 'node:net';
import OpenAI from 'openai';
import t from 'tap';
import { startFakeOpenAI } from '../../../test/fakes/openai.ts';
import { ModelClient } from './model.ts';
import { createModelTransport } from './model-fetch.ts';

const ai = (baseUrl: string, apiKey = 'test-key') => ({
  baseUrl,
  apiKey,
  model: 'fake-small',
  contextTokens: 8000,
  maxToolRounds: 5,
});
const messages = [{ role: 'user' as const, content: 'hello' }];
const tools = [
  {
    type: 'function' as const,
    function: { name: 'lookup', description: 'd', parameters: { type: 'object', properties: {} } },
  },
];

/** What the fake saw of a request: every header but the connection's own, and the body as sent. */
const seen = (call: { headers: Record<string, unknown>; body: unknown }) => {
  const { host: _h, connection: _c, ...headers } = call.headers;
  return { headers, body: JSON.stringify(call.body) };
};

t.test('a streamed completion goes out as the SDK sends it: same URL, headers and body', async (t) => {
  const fake = await startFakeOpenAI({ apiKey: 'test-key' });
  const client = new ModelClient(ai(fake.baseUrl));
  const transport = await createModelTransport({ headersTimeoutMs: 5000, bodyTimeoutMs: 5000 });
  t.teardown(async () => {
    await client.close();
    await transport.close();
    await fake.close();
  });
  // The SDK itself, over the same transport, as the client sent every completion before.
  const sdk = new OpenAI({ apiKey: 'test-key', baseURL: fake.baseUrl, maxRetries: 0, fetch: transport.fetch });
  const signal = new AbortController().signal;
  const viaSdk = await sdk.chat.completions
    .create({ model: 'fake-small', messages, stream: true, stream_options: { include_usage: true }, tools }, { signal })
    .asResponse();
  transport.bodyOf(viaSdk)?.discard();
  let text = '';
  await (await client.open(messages, tools, signal)).each((c) => {
    text += c.choices[0]?.delta?.content ?? '';
  });
  t.equal(text, 'Echo: hello', 'the reply streams');
  const [a, b] = await fake.waitForCalls(2);
  t.same(seen(b!), seen(a!), 'headers (authorization and the SDK’s own among them) and body are the SDK’s');
  t.equal(b!.headers.authorization, 'Bearer test-key');
  t.match(String(b!.headers['user-agent']), /^OpenAI\/JS /);

  // Without tools the request has no `tools`, as before.
  await (await client.open(messages, [], signal)).each(() => {});
  t.notOk('tools' in (await fake.waitForCalls(3))[2]!.body);
});

t.test('the outcomes before streaming are the SDK’s errors, mapped to the same problems', async (t) => {
  const fake = await startFakeOpenAI({ apiKey: 'test-key' });
  const client = new ModelClient(ai(fake.baseUrl));
  const wrongKey = new ModelClient(ai(fake.baseUrl, 'sk-wrong'));
  // A port nothing listens on.
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const unreachable = new ModelClient(ai(`http://127.0.0.1:${port}/v1`));
  t.teardown(async () => {
    await Promise.all([client.close(), wrongKey.close(), unreachable.close()]);
    await fake.close();
  });
  const signal = new AbortController().signal;
  const failure = async (c: ModelClient) => {
    const err = await c.open(messages, [], signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err, 'the call failed');
    return { err: err as Error, problem: c.failure(err) };
  };

  fake.next({ failStatus: 429 });
  const limited = await failure(client);
  t.equal(limited.err.constructor.name, 'RateLimitError');
  t.equal(limited.problem.code, 'model_rate_limited');
  t.equal(limited.problem.status, 503);

  fake.next({ failStatus: 500 });
  t.equal((await failure(client)).problem.code, 'model_unavailable');

  fake.next({ failStatus: 400 });
  const rejected = await failure(client);
  t.equal(rejected.err.constructor.name, 'BadRequestError');
  t.equal(rejected.problem.code, 'model_rejected');
  t.match(rejected.problem.message, /HTTP 400\): 400 The server had an error while processing your request\./);

  const auth = await failure(wrongKey);
  t.equal(auth.err.constructor.name, 'AuthenticationError');
  t.equal(auth.problem.code, 'model_auth_failed');

  const down = await failure(unreachable);
  t.equal(down.err.constructor.name, 'APIConnectionError');
  t.equal(down.problem.code, 'model_unreachable');

  // Our own abort before the answer: an abort, not a model failure.
  const controller = new AbortController();
  fake.next({ headerDelayMs: 2000 });
  const pending = client.open(messages, [], controller.signal);
  setTimeout(() => controller.abort(), 50);
  const aborted = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(ModelClient.isAbort(aborted, controller.signal), 'an abort');
});
