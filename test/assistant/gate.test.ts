import t from 'tap';
import { gate, MAX_WAITING } from '../../core/src/assistant/turns.ts';
import { waitFor } from '../helpers/wait.ts';
import { harness, newChat, newUser, send } from './support.ts';

/**
 * Keeps the service's opening gate busy: two chains of `save` steps (the first stage served), each spinning a few ms,
 * so a new message's `open` step waits until `stop()`.
 */
function hog(): { stop(): Promise<void> } {
  let on = true;
  const chain = async () => {
    while (on) {
      await gate.enter('save');
      const until = performance.now() + 3;
      while (performance.now() < until) {
        /* the step's work */
      }
    }
  };
  const chains = [chain(), chain()];
  return {
    async stop() {
      on = false;
      await Promise.all(chains);
    },
  };
}

const history = async (svc: Awaited<ReturnType<typeof harness>>['svc'], token: string, chat: string) =>
  (await svc.request('GET', `/api/v1/chats/${chat}/messages`, { token })).body.messages;

t.test('a client that leaves while its message waits for the gate leaves nothing behind', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  const busy = hog();
  // The client leaves once its message waits in the gate (a fixed 300 ms could come before, on a loaded machine).
  const waiting = waitFor('the message to wait in the gate', () => gate.waitingIn('open') === 1);
  const sending = send(svc, u.token, chat, 'will you wait', { abortOn: waiting });
  await waiting;
  const r = await sending;
  t.equal(r.status, 0, 'the client gave up before any response');
  await waitFor('its place in the queue to be released', () => gate.waitingIn('open') === 0);
  t.pass('its place in the queue was released');
  await busy.stop();
  t.same(await history(svc, u.token, chat), [], 'no message stored');
  t.equal((await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body.messages_used, 0, 'none counted');
  t.equal(ai.calls.length, 0, 'the model was not asked');
  ai.next({ text: 'here now' });
  const next = await send(svc, u.token, chat, 'and now');
  t.equal(next.status, 200, 'the next message goes through');
  t.same(
    (await history(svc, u.token, chat)).map((m: { content: string }) => m.content),
    ['and now', 'here now'],
  );
});

t.test('messages queued behind a busy gate all stream, each reply after its question', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chats = await Promise.all(Array.from({ length: 6 }, () => newChat(svc, u.token)));
  ai.setScript((body: { messages: { content: string }[] }) => ({ text: `re: ${body.messages.at(-1)!.content}` }));
  const busy = hog();
  const sending = chats.map((c, i) => send(svc, u.token, c, `q${i}`));
  await waitFor('a message to wait in the gate', () => gate.waitingIn('open') >= 1);
  await busy.stop();
  const results = await Promise.all(sending);
  t.same(
    results.map((r) => r.status),
    [200, 200, 200, 200, 200, 200],
  );
  for (const [i, c] of chats.entries())
    t.same(
      (await history(svc, u.token, c)).map((m: { role: string; content: string }) => [m.role, m.content]),
      [
        ['user', `q${i}`],
        ['assistant', `re: q${i}`],
      ],
    );
  t.equal((await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body.messages_used, 6);
});

t.test('a full opening queue refuses a new message with 503 assistant_busy, counting nothing', async (t) => {
  const { svc, ai } = await harness(t);
  const u = await newUser(svc);
  const chat = await newChat(svc, u.token);
  const busy = hog();
  const left = new AbortController();
  const queued: Promise<unknown>[] = [];
  while (gate.waitingIn('open') < MAX_WAITING) queued.push(gate.enter('open', left.signal)!.catch(() => undefined));
  const r = await send(svc, u.token, chat, 'is there room');
  left.abort();
  await Promise.all(queued);
  await busy.stop();
  t.equal(r.status, 503);
  t.equal(r.problem.code, 'assistant_busy');
  t.match(r.problem.detail, /too many messages waiting/);
  t.equal(ai.calls.length, 0);
  t.same(await history(svc, u.token, chat), []);
  t.equal((await svc.request('GET', '/api/v1/chats/quota', { token: u.token })).body.messages_used, 0);
});
