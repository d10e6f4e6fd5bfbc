/**
 * The core's side of dialect routes, without a service: which declared routes are accepted at
 * boot, the log masking of a route parameter with a pattern, per-plugin token sizes, and the
 * template engine's `{{markdown path}}` that carries a sender's Markdown to Markdown targets.
 */
import t from 'tap';
import { CredentialPaths } from '../../core/src/logging/credential-paths.ts';
import { declaredRoutes, newWebhookToken } from '../../core/src/relay/inbound/dialects.ts';
import { render } from '../../core/src/relay/templates/engine.ts';

const provider = (id: string, routes: unknown[], ingest = 'webhook') => ({
  id,
  kind: 'provider',
  def: { manifest: { id, ingest, webhook: { routes } } },
});
const route = (method: string, path: string) => ({ method, path, summary: 's', token: () => undefined });
const coreWith = (...plugins: ReturnType<typeof provider>[]) =>
  ({ plugins: { plugins: new Map(plugins.map((p) => [p.id, p])) } }) as never;

t.test('declared routes: accepted, and refused at boot when they could not be served safely', async (t) => {
  const ok = declaredRoutes(
    coreWith(
      provider('a', [route('POST', '/api/compat/a/message'), route('PUT', '/:topic(^[a-z]{16}$)'), route('POST', '/')]),
      provider('b', [route('POST', '/api/compat/b')]),
    ),
  );
  t.same(
    ok.map((r) => `${r.plugin.id} ${r.spec.method} ${r.spec.path}`),
    ['a POST /api/compat/a/message', 'a PUT /:topic(^[a-z]{16}$)', 'a POST /', 'b POST /api/compat/b'],
  );
  t.same(
    declaredRoutes(coreWith(provider('poller', [route('POST', '/x')], 'poll'))),
    [],
    'only webhook providers declare routes',
  );
  t.throws(
    () => declaredRoutes(coreWith(provider('a', [route('POST', '/same')]), provider('b', [route('POST', '/same')]))),
    { message: 'Plugins "a" and "b" both declare the dialect route POST /same; enable only one.' },
  );
  t.throws(() => declaredRoutes(coreWith(provider('a', [route('GET', '/x')]))), { message: /only POST and PUT/ });
  t.throws(
    () => declaredRoutes(coreWith(provider('a', [route('POST', '/:anything')]))),
    { message: /first segment needs a pattern/ },
    'a bare root parameter would take every path',
  );
  t.throws(() => declaredRoutes(coreWith(provider('a', [route('POST', '/api/hooks/:token')]))), {
    message: /outside \/api\/hooks/,
  });
  t.throws(() => declaredRoutes(coreWith(provider('a', [route('POST', 'relative')]))), { message: /absolute/ });
});

t.test('a credential parameter with a pattern masks only segments of that shape', async (t) => {
  const paths = new CredentialPaths();
  paths.add('/:topic(^[-_A-Za-z0-9]{16,64}$)', ['topic']);
  paths.add('/api/compat/apprise/notify/:token', ['token']);
  paths.add('/api/hooks/:token', ['token']);
  const topic = 'Ab-_cdefghijklmnop0123456789ABCDEFGHIJKLMNO';
  t.equal(paths.mask(`/${topic}`), '/[REDACTED]');
  t.equal(paths.mask(`/${topic}?title=x`), '/[REDACTED]?title=x');
  t.equal(paths.mask('/favicon.ico'), '/favicon.ico', 'a file name is not a topic');
  t.equal(paths.mask('/settings'), '/settings', 'nor is a short client route');
  t.equal(paths.mask('/api/compat/apprise/notify/abc'), '/api/compat/apprise/notify/[REDACTED]');
  t.equal(
    paths.mask('/api/hooks/abc'),
    '/api/hooks/[REDACTED]',
    'a parameter without a pattern masks any value, as before',
  );
  paths.add('/:topic(^[-_A-Za-z0-9]{16,64}$)', ['topic']);
  t.equal((paths as unknown as { patterns: unknown[] }).patterns.length, 3, 'the same route twice is one pattern');
});

t.test('webhook tokens: 32 random bytes unless the plugin asks for another size within 12–48', async (t) => {
  t.match(newWebhookToken(), /^[-_A-Za-z0-9]{43}$/);
  t.match(newWebhookToken({ def: { manifest: { webhook: { tokenBytes: 24 } } } }), /^[-_A-Za-z0-9]{32}$/);
  t.match(
    newWebhookToken({ def: { manifest: { webhook: { tokenBytes: 4 } } } }),
    /^[-_A-Za-z0-9]{16}$/,
    'at least 12 bytes',
  );
  t.match(
    newWebhookToken({ def: { manifest: { webhook: { tokenBytes: 1000 } } } }),
    /^[-_A-Za-z0-9]{64}$/,
    'at most 48 bytes',
  );
  t.not(newWebhookToken(), newWebhookToken());
  // One in 64 base64url tokens would begin with "-"; in 2,000 that happens with a probability of 1 - 2e-14.
  const tokens = Array.from({ length: 2000 }, () =>
    newWebhookToken({ def: { manifest: { webhook: { tokenBytes: 12 } } } }),
  );
  t.equal(tokens.filter((x) => x.startsWith('-')).length, 0, 'no token begins with "-" (a mailbox, an argument)');
  t.ok(
    tokens.some((x) => x.startsWith('_')),
    'the other 63 first characters stay',
  );
  t.ok(
    tokens.some((x) => x.includes('-')),
    '"-" stays inside a token',
  );
});

t.test(
  "{{markdown path}}: a Markdown target gets the sender's Markdown as written; HTML and text as any value",
  async (t) => {
    const ctx = { message: '**Disk** <full> & [log](https://x.test/a_b)', markdown: true, nested: { x: 'n*' } };
    t.equal(render('{{markdown message}}', ctx, 'markdown'), ctx.message);
    t.equal(
      render('{{message}}', ctx, 'markdown'),
      '\\*\\*Disk\\*\\* \\<full\\> & \\[log\\]\\(https://x\\.test/a\\_b\\)',
      'a plain substitution is still escaped',
    );
    t.equal(render('{{markdown message}}', ctx, 'html'), '**Disk** &lt;full&gt; &amp; [log](https://x.test/a_b)');
    t.equal(render('{{markdown message}}', ctx, 'text'), ctx.message);
    t.equal(
      render('{{#if markdown}}md{{/if}} {{markdown}}', ctx, 'text'),
      'md true',
      'a field named markdown is still a field',
    );
    t.equal(
      render('{{markdown nested.x}}|{{markdown.x}}', { ...ctx, markdown: { x: 'y' } }, 'markdown'),
      'n*|y',
      'a path after it; markdown.x is a path into a field',
    );
    t.equal(render('{{markdown missing}}', ctx, 'markdown'), '');
  },
);
