import { missingLocaleStrings } from '@herald/plugin-api';
import { checkEvent, createTestHost, dialectRequest } from '@herald/plugin-api/testing';
import t from 'tap';
import plugin, { appriseUrl } from './index.ts';
import { htmlText } from './notify.ts';

const PATH = '/api/compat/apprise/notify/:token';
const KEY = 'abcDEF0123456789_-abcdef01234567';

async function apprise() {
  const host = createTestHost();
  const { instance } = await host.provider(plugin, {});
  const post = (o: {
    json?: unknown;
    form?: string;
    headers?: Record<string, string>;
    query?: Record<string, string>;
    body?: string;
  }) =>
    dialectRequest(plugin, instance, {
      path: PATH,
      params: { token: KEY },
      query: o.query,
      headers: {
        ...(o.json !== undefined
          ? { 'content-type': 'application/json' }
          : o.form !== undefined
            ? { 'content-type': 'application/x-www-form-urlencoded' }
            : {}),
        ...o.headers,
      },
      body: o.json !== undefined ? JSON.stringify(o.json) : (o.form ?? o.body),
    });
  return post;
}

t.test('each type maps to its severity', async (t) => {
  const post = await apprise();
  const severity = async (type?: string) =>
    (await post({ json: { body: 'b', ...(type ? { type } : {}) } })).result!.events[0]!.severity;
  t.same(await Promise.all(['info', 'success', 'warning', 'failure', undefined].map(severity)), [
    'info',
    'info',
    'warning',
    'critical',
    'info',
  ]);
  t.equal(await severity('FAILURE'), 'critical', 'any case');
});

t.test('JSON and form bodies; formats; tags; the query fills what the body leaves out', async (t) => {
  const post = await apprise();
  const json = await post({
    json: { title: 'Backup', body: '**nas** done', type: 'success', format: 'markdown', tag: ['ops', 'nas'] },
  });
  t.equal(json.token, KEY);
  t.same(json.result!.events[0]!.payload, {
    title: 'Backup',
    body: '**nas** done',
    type: 'success',
    format: 'markdown',
    markdown: true,
    tags: ['ops', 'nas'],
    source_ip: '192.0.2.1',
  });
  t.same(json.answer!.body, { error: null, details: 'Notification(s) sent.' }, 'a JSON request gets a JSON answer');
  const form = await post({ form: 'title=Disk+%C2%ABfull%C2%BB&body=%2Fsrv+100%25&type=warning&tag=ops,nas+home' });
  t.same(form.result!.events[0]!.payload, {
    title: 'Disk «full»',
    body: '/srv 100%',
    type: 'warning',
    format: 'text',
    markdown: false,
    tags: ['ops', 'nas', 'home'],
    source_ip: '192.0.2.1',
  });
  t.equal(form.answer!.body, 'Notification(s) sent.', 'a form gets text');
  t.same(
    (await post({ form: 'body=x', headers: { accept: 'application/json' } })).answer!.body,
    { error: null, details: 'Notification(s) sent.' },
    'Accept: application/json asks for JSON',
  );
  const untyped = await post({ body: 'body=no+content+type' });
  t.equal(
    untyped.result!.events[0]!.payload.body,
    'no content type',
    'without a Content-Type the body is read as a form, as the Apprise API does',
  );
  const boundary = 'xYz';
  const multipart = [
    `--${boundary}`,
    'Content-Disposition: form-data; name="body"',
    '',
    'from multipart',
    `--${boundary}`,
    'Content-Disposition: form-data; name="type"',
    '',
    'failure',
    `--${boundary}--`,
    '',
  ].join('\r\n');
  const mp = await post({ headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: multipart });
  t.match(mp.result!.events[0]!, { severity: 'critical', payload: { body: 'from multipart', type: 'failure' } });
  const html = await post({
    json: { body: '<p>Disk <b>full</b> &amp; hot</p><p>line&nbsp;2<br>line 3</p><script>x()</script>', format: 'html' },
  });
  t.match(html.result!.events[0]!.payload, {
    body: 'Disk full & hot\nline 2\nline 3',
    format: 'html',
    markdown: false,
  });
  const query = await post({ json: { body: 'b' }, query: { title: 'From the query', type: 'warning', tag: 'q' } });
  t.match(query.result!.events[0]!, { severity: 'warning', payload: { title: 'From the query', tags: ['q'] } });
  t.equal(htmlText('a &#x26A0; &#9731; &bogus;'), 'a ⚠ ☃ &bogus;');
});

t.test('refusals as the Apprise API words them: JSON for JSON clients, text otherwise', async (t) => {
  const post = await apprise();
  const missing = await post({ json: { title: 'no body' } });
  t.equal(missing.status, 400);
  t.same(missing.answer!.body, { error: 'Payload lacks minimum requirements' });
  const missingForm = await post({ form: 'title=no+body' });
  t.equal(missingForm.answer!.body, 'Payload lacks minimum requirements');
  t.same(
    (await post({ json: { body: 'b', type: 'critical' } })).answer!.body,
    { error: 'Payload lacks minimum requirements' },
    'an unknown type',
  );
  t.same((await post({ json: { body: 'b', format: 'rtf' } })).answer!.body, {
    error: 'An invalid body input format was specified',
  });
  t.same((await post({ headers: { 'content-type': 'application/json' }, body: '{"body":' })).answer!.body, {
    error: 'Invalid JSON Payload provided',
  });
  t.same((await post({ json: { body: 'b', tag: 5 } })).answer!.body, {
    error: 'Unsupported characters found in tag definition',
  });
  t.equal((await post({ json: ['body'] })).status, 400);
});

t.test('the apprise:// URL, connection, examples and locales', async (t) => {
  t.equal(appriseUrl('http://127.0.0.1:8080', KEY), `apprise://127.0.0.1:8080/api/compat/apprise/${KEY}`);
  t.equal(appriseUrl('https://example.net/herald', KEY), `apprises://example.net/herald/api/compat/apprise/${KEY}`);
  t.same(plugin.manifest.webhook!.connection!('https://herald.example.net', 'k'), {
    url: 'apprises://herald.example.net/api/compat/apprise/k',
    fields: [
      { key: 'apprise_url', value: 'apprises://herald.example.net/api/compat/apprise/k', secret: true },
      { key: 'notify_url', value: 'https://herald.example.net/api/compat/apprise/notify/k', secret: true },
    ],
    example:
      'curl -X POST -d \'{"body":"Backup done"}\' -H \'Content-Type: application/json\' ' +
      'https://herald.example.net/api/compat/apprise/notify/k',
  });
  t.equal(plugin.manifest.webhook!.tokenBytes, 24, '32-character keys, what Apprise accepts');
  for (const [type, spec] of Object.entries(plugin.manifest.events!))
    checkEvent(plugin, { type, payload: spec.example! });
  t.same(missingLocaleStrings(plugin.manifest, 'en'), []);
  t.same(missingLocaleStrings(plugin.manifest, 'ru'), []);
  t.ok(plugin.manifest.templates?.ru?.apprise_notification);
});
