/**
 * The event log answers each delivery's message as its target got it (`rendered`: title and body as plain text), in
 * the target's language: the same text the target was sent.
 */
import t from 'tap';
import { startService, startSink } from '../helpers/service.ts';

t.test("each delivery carries the text its target received, in the target's language", async (t) => {
  const s = await startService();
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const token = s.admin.token;
  const call = async (method: string, p: string, body?: unknown) => {
    const r = await s.request(method, p, { token, body });
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
    return r.body;
  };
  const provider = await call('POST', '/api/providers', {
    kind: 'example',
    name: 'Boiler room',
    config: { shared_token: 'sharedtoken1' },
  });
  const tracker = await call('POST', '/api/trackers', { provider_id: provider.id, name: 'Boilers' });
  const targets: Record<string, string> = {};
  for (const locale of ['en', 'ru']) {
    const target = await call('POST', '/api/targets', {
      kind: 'recorder',
      name: `Sink ${locale}`,
      config: { url: sink.url },
      locale,
    });
    targets[target.id] = locale;
    await call('PUT', `/api/trackers/${tracker.id}/targets/${target.id}`);
  }
  const hook = await s.request('POST', new URL(provider.webhook_url).pathname, {
    headers: { 'x-example-token': 'sharedtoken1' },
    body: { type: 'thing_happened', payload: { name: 'boiler' }, note: 'pressure low' },
  });
  t.equal(hook.status, 202, 'the webhook took the event');
  const received = await sink.waitFor(2);

  const [event] = (await call('GET', '/api/events?locale=en')).events;
  t.equal(event.deliveries.length, 2, 'one delivery per target');
  for (const d of event.deliveries) {
    const got = received.map((m: { body: any }) => m.body).find((m: { deliveryId: string }) => m.deliveryId === d.id);
    t.ok(got, `${targets[d.target_id]}: the sink got the delivery`);
    t.same(d.rendered, { title: got.title, body: got.body }, `${targets[d.target_id]}: the text it received`);
  }
  const byLocale = Object.fromEntries(event.deliveries.map((d: any) => [targets[d.target_id], d.rendered]));
  t.same(byLocale.en, { title: 'Thing: boiler', body: 'boiler happened (pressure low)' }, 'in English');
  t.same(byLocale.ru, { title: 'Событие: boiler', body: 'Произошло boiler' }, 'in Russian');
  t.equal(event.message, 'Thing: boiler', "the event's own line stays in the asked language");
  const one = await call('GET', `/api/events/${event.id}`);
  t.same(
    one.deliveries.map((d: any) => d.rendered),
    event.deliveries.map((d: any) => d.rendered),
    'the same on the single event',
  );
});
