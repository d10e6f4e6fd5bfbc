/**
 * Allow lists wider than any private network (`0.0.0.0/0`, `::/0`) are accepted, since an
 * administrator may mean them, but never silently: the API answer names each such entry with a
 * sentence on what it opens, and the log has a warning when a list is set with one (and at boot
 * when SERVICE_OUTBOUND_ALLOW_CIDRS holds one). Ordinary private ranges get no warning.
 */
import t from 'tap';
import { wideAllowEntries } from '../../core/src/net/instance-allow.ts';
import { startService } from '../helpers/service.ts';

t.test('which entries are wider than any private network', async (t) => {
  t.same(
    wideAllowEntries(['0.0.0.0/0', '::/0', '0.0.0.0/1', '::ffff:0:0/96', '8000::/1', ' 0.0.0.0/0 ']).map(
      (w) => w.entry,
    ),
    ['0.0.0.0/0', '::/0', '0.0.0.0/1', '::ffff:0:0/96', '8000::/1', '0.0.0.0/0'],
  );
  t.same(
    wideAllowEntries([
      '10.0.0.0/8',
      'fc00::/7',
      '192.168.1.0/24',
      '127.0.0.1',
      '::ffff:10.0.0.0/104',
      'nas.lan',
      'not an entry/0',
      '',
    ]),
    [],
    'private networks, addresses and host names are not',
  );
  const [every] = wideAllowEntries(['0.0.0.0/0']);
  t.equal(every!.code, 'outbound_allow_too_wide');
  t.match(
    every!.message,
    /"0\.0\.0\.0\/0" opens every IPv4 address: .*loopback.*cloud metadata.*server-side request forgery/,
  );
});

t.test('the API answers and the log warn about a list that opens everything, and still accept it', async (t) => {
  const s = await startService({ SERVICE_OUTBOUND_ALLOW_CIDRS: '' });
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const warnings = () =>
    s
      .logs()
      .filter(
        (l) => l.level === 'warn' && /outbound allow list was set wider than any private network/.test(l.msg ?? ''),
      );

  const target = await s.request('POST', '/api/targets', {
    token,
    body: {
      kind: 'recorder',
      name: 'Wide',
      config: { url: 'http://127.0.0.1:9/' },
      locale: 'en',
      outbound_allow: ['192.168.1.0/24', '0.0.0.0/0', '::/0'],
    },
  });
  t.equal(target.status, 201, 'accepted');
  t.same(target.body.outbound_allow, ['192.168.1.0/24', '0.0.0.0/0', '::/0']);
  t.same(
    target.body.outbound_allow_warnings.map((w: { entry: string }) => w.entry),
    ['0.0.0.0/0', '::/0'],
    'the answer names the wide entries only',
  );
  t.match(target.body.outbound_allow_warnings[1].message, /every IPv6 address/);
  t.equal(warnings().length, 1, 'one warning logged');
  t.same(warnings()[0].entries, ['0.0.0.0/0', '::/0']);
  t.same(
    (await s.request('GET', `/api/targets/${target.body.id}`, { token })).body.outbound_allow_warnings.length,
    2,
    'reading it shows them too',
  );

  const renamed = await s.request('PATCH', `/api/targets/${target.body.id}`, { token, body: { name: 'Still wide' } });
  t.equal(renamed.body.outbound_allow_warnings.length, 2);
  t.equal(warnings().length, 1, 'a change that leaves the list alone logs nothing more');
  const narrowed = await s.request('PATCH', `/api/targets/${target.body.id}`, {
    token,
    body: { outbound_allow: ['192.168.1.0/24'] },
  });
  t.same(narrowed.body.outbound_allow_warnings, [], 'a private range alone: no warning');

  const provider = await s.request('POST', '/api/providers', {
    token,
    body: {
      kind: 'example',
      name: 'Wide poller',
      config: { shared_token: 'sharedtoken1' },
      outbound_allow: ['::ffff:0:0/96'],
    },
  });
  t.equal(provider.status, 201);
  t.same(
    provider.body.outbound_allow_warnings.map((w: { entry: string }) => w.entry),
    ['::ffff:0:0/96'],
    'IPv4-mapped space counts as IPv4',
  );
  t.equal(warnings().length, 2);

  const put = await s.request('PUT', `/api/admin/outbound-allow/target/${target.body.id}`, {
    token,
    body: { outbound_allow: ['0.0.0.0/0'] },
  });
  t.equal(put.status, 200, put.text);
  t.same(
    put.body.outbound_allow_warnings.map((w: { entry: string }) => w.entry),
    ['0.0.0.0/0'],
  );
  t.equal(warnings().length, 3, "the administrators' page warns the same way");
  const listed = (await s.request('GET', '/api/admin/outbound-allow', { token })).body.items;
  t.same(
    listed
      .find((i: { id: string }) => i.id === target.body.id)
      .outbound_allow_warnings.map((w: { entry: string }) => w.entry),
    ['0.0.0.0/0'],
  );
});

t.test('SERVICE_OUTBOUND_ALLOW_CIDRS with 0.0.0.0/0 boots with a warning', async (t) => {
  const s = await startService({ SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32,0.0.0.0/0' });
  const lines = s.logs().filter((l) => l.level === 'warn' && /SERVICE_OUTBOUND_ALLOW_CIDRS/.test(l.msg ?? ''));
  await s.stop();
  t.equal(lines.length, 1, 'one warning, for the wide entry only');
  t.equal(lines[0].entry, '0.0.0.0/0');
  t.match(lines[0].msg, /every plugin: "0\.0\.0\.0\/0" opens every IPv4 address/);
});
