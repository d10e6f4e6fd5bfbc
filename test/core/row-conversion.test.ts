/**
 * providerRowFrom / targetRowFrom: a frozen row (one the routing cache keeps) is converted once and the frozen
 * conversion reused; any other row is converted afresh every time, so a row read anew is never answered from an older
 * one.
 */
import t from 'tap';
import { providerRowFrom, targetRowFrom } from '../../core/src/plugins/host.ts';

const provider = {
  id: 'p1',
  user_id: 'u1',
  kind: 'generic_webhook',
  name: 'Hooks',
  config: '{"a":1}',
  enabled: 1,
  webhook_token: 'tok',
  updated_at: '2026-11-27T00:00:00.000Z',
  outbound_allow: null,
};
const target = {
  id: 't1',
  user_id: 'u1',
  kind: 'chat_webhook',
  name: 'Chat',
  config: '{"url":"http://127.0.0.1:9/"}',
  locale: 'ru' as const,
  enabled: 1,
  updated_at: '2026-11-27T00:00:00.000Z',
  outbound_allow: null,
};

t.test('a frozen row is converted once', async (t) => {
  const p = Object.freeze({ ...provider });
  const a = providerRowFrom(p);
  t.equal(providerRowFrom(p), a, 'the same conversion');
  t.ok(Object.isFrozen(a));
  t.same(a.config, { a: 1 });
  t.equal(a.enabled, true);
  const g = Object.freeze({ ...target });
  const b = targetRowFrom(g);
  t.equal(targetRowFrom(g), b);
  t.equal(b.locale, 'ru');
  t.same(b.config, { url: 'http://127.0.0.1:9/' });
});

t.test('any other row is converted every time', async (t) => {
  const p = { ...provider };
  const a = providerRowFrom(p);
  t.not(providerRowFrom(p), a);
  t.notOk(Object.isFrozen(a));
  p.config = '{"a":2}';
  t.same(providerRowFrom(p).config, { a: 2 }, 'a changed row gives its new values');
  const g = { ...target };
  t.not(targetRowFrom(g), targetRowFrom(g));
});
