/**
 * The outbound address policy on its own, fast: each refused range on both sides of its edges,
 * every IPv6 form that embeds an IPv4 address, the allow list, the refusal's words, CIDR parsing,
 * and the per-instance allow list's checks (core/src/net/outbound.test.ts drives the same policy
 * through the HTTP client).
 */

import net from 'node:net';
import t from 'tap';
import { createAddressPolicy, ipv6Groups } from './address-policy.ts';
import { inList, normalizeAddress, parseCidrList } from './cidr.ts';
import {
  checkOutboundAllow,
  hostKey,
  OUTBOUND_ALLOW_MAX,
  splitOutboundAllow,
  wideAllowEntries,
} from './instance-allow.ts';

const policy = createAddressPolicy([]);

t.test('each refused IPv4 range, its first and last address, and the addresses just outside', async (t) => {
  const ranges: [label: string, first: string, last: string, before: string | null, after: string | null][] = [
    ['an unspecified / "this network" address', '0.0.0.0', '0.255.255.255', null, '1.0.0.0'],
    ['a private address', '10.0.0.0', '10.255.255.255', '9.255.255.255', '11.0.0.0'],
    ['a carrier-grade NAT address', '100.64.0.0', '100.127.255.255', '100.63.255.255', '100.128.0.0'],
    ['a loopback address', '127.0.0.0', '127.255.255.255', '126.255.255.255', '128.0.0.0'],
    ['a link-local address', '169.254.0.0', '169.254.255.255', '169.253.255.255', '169.255.0.0'],
    ['a private address', '172.16.0.0', '172.31.255.255', '172.15.255.255', '172.32.0.0'],
    ['a reserved or broadcast address', '192.0.0.0', '192.0.0.255', '191.255.255.255', '192.0.1.0'],
    ['a private address', '192.168.0.0', '192.168.255.255', '192.167.255.255', '192.169.0.0'],
    ['a reserved or broadcast address', '198.18.0.0', '198.19.255.255', '198.17.255.255', '198.20.0.0'],
    ['a multicast address', '224.0.0.0', '239.255.255.255', '223.255.255.255', null],
    ['a reserved or broadcast address', '240.0.0.0', '255.255.255.255', null, null],
  ];
  for (const [label, first, last, before, after] of ranges) {
    t.equal(policy.refusal(first), label, `${first}: ${label}`);
    t.equal(policy.refusal(last), label, `${last}: ${label}`);
    if (before) t.equal(policy.refusal(before), null, `${before} is public`);
    if (after) t.equal(policy.refusal(after), null, `${after} is public`);
  }
});

t.test('each refused IPv6 range at its edges', async (t) => {
  const cases: [string, string | null][] = [
    ['::', 'an unspecified / "this network" address'],
    ['::1', 'a loopback address'],
    ['::2', 'an IPv6 form of 0.0.0.2, an unspecified / "this network" address'],
    ['::ffff', 'an IPv6 form of 0.0.255.255, an unspecified / "this network" address'],
    ['::1:0', 'an IPv6 form of 0.1.0.0, an unspecified / "this network" address'],
    ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null],
    ['fc00::', 'a unique-local address'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a unique-local address'],
    ['fe00::', null],
    ['fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null],
    ['fe80::', 'a link-local address'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a link-local address'],
    ['fec0::', 'a link-local address'],
    ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'a link-local address'],
    ['ff00::', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['feff::1', 'a link-local address'],
    ['64:ff9b:1::', 'a local-use NAT64 address'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'a local-use NAT64 address'],
    ['64:ff9b:2::', null],
    ['2606:4700:4700::1111', null],
    ['2001:db8::1', null],
  ];
  for (const [address, want] of cases) t.equal(policy.refusal(address), want, `${address}: ${want ?? 'public'}`);
  t.equal(policy.refusal('fe80::1%eth0'), 'a link-local address', 'a zone index is ignored');
});

t.test('IPv6 forms that embed an IPv4 address are judged by it', async (t) => {
  const cases: [string, string | null][] = [
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::ffff:8.8.8.8', null],
    ['::ffff:0:127.0.0.1', 'an IPv6 form of 127.0.0.1, a loopback address'],
    ['::ffff:0:808:808', null],
    ['::10.0.0.1', 'an IPv6 form of 10.0.0.1, a private address'],
    ['::8.8.8.8', null],
    ['64:ff9b::169.254.169.254', 'an IPv6 form of 169.254.169.254, a link-local address'],
    ['64:ff9b::808:808', null],
    ['64:ff9b:0:0:0:1:a00:1', null],
    ['2002:c0a8:0101::1', 'an IPv6 form of 192.168.1.1, a private address'],
    ['2002:0808:0808::1', null],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'an IPv6 form of 127.0.0.1, a loopback address'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', null],
    ['2001:1::f5ff:fffe', null],
    ['2000::f5ff:fffe', null],
  ];
  for (const [address, want] of cases) t.equal(policy.refusal(address), want, `${address}: ${want ?? 'public'}`);
  t.same(policy.normalize('::ffff:10.0.0.1'), { address: '10.0.0.1', family: 4 }, 'mapped becomes plain IPv4');
  t.same(policy.normalize('::ffff:0:10.0.0.1'), { address: '::ffff:0:10.0.0.1', family: 6 }, 'translated stays IPv6');
  t.same(policy.normalize('fe80::1'), { address: 'fe80::1', family: 6 });
  t.same(policy.normalize('10.0.0.1'), { address: '10.0.0.1', family: 4 });
  t.equal(policy.refusal('not-an-ip'), 'not an IP address');
  t.equal(policy.refusal('10.0.0.1.5'), 'not an IP address');
});

t.test(
  'only the exact embedding prefixes carry an IPv4 address, and a zone index never changes the address',
  async (t) => {
    // IPv4-translated is ::ffff:0:0/96 exactly: a sixth group other than 0 is an ordinary (public) address.
    t.equal(policy.refusal('::ffff:0:7f00:1'), 'an IPv6 form of 127.0.0.1, a loopback address');
    t.equal(policy.refusal('::ffff:1:7f00:1'), null, '::ffff:1:0:0/96 embeds nothing');
    // NAT64 is 64:ff9b::/96: both first groups must match.
    t.equal(policy.refusal('64:ff9b::a00:1'), 'an IPv6 form of 10.0.0.1, a private address');
    t.equal(policy.refusal('0:ff9b::a00:1'), null, 'ff9b without 64 before it');
    t.equal(policy.refusal('64::a00:1'), null, '64 without ff9b after it');
    t.equal(policy.refusal('1:2::a00:1'), null, 'neither');
    // A zone index is cut off whole, so neither an empty last group nor a dotted tail is changed by it.
    t.same(ipv6Groups('fe80::%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 0]);
    t.same(ipv6Groups('::ffff:127.0.0.1%eth0'), [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    t.equal(policy.refusal('::ffff:127.0.0.1%eth0'), 'a loopback address');
    t.same(policy.normalize('::ffff:127.0.0.1%eth0'), { address: '127.0.0.1', family: 4 });
    // normalize returns anything that is not an IP address as it is, even text that reads like a mapped one.
    t.equal(policy.normalize('::ffff:7f00:1zz').address, '::ffff:7f00:1zz');
    t.equal(policy.normalize('host.test').address, 'host.test');
  },
);

t.test('ipv6Groups expands every spelling into eight groups', async (t) => {
  t.same(ipv6Groups('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
  t.same(ipv6Groups('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
  t.same(ipv6Groups('fe80::1%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
  t.same(ipv6Groups('FE80:0:0:0:0:0:0:2'), [0xfe80, 0, 0, 0, 0, 0, 0, 2], 'no :: and upper case');
  t.same(ipv6Groups('1:2::7:8'), [1, 2, 0, 0, 0, 0, 7, 8]);
  t.same(ipv6Groups('::ffff:192.168.1.2'), [0, 0, 0, 0, 0, 0xffff, 0xc0a8, 0x0102]);
  t.same(ipv6Groups('64:ff9b::255.1.0.255'), [0x64, 0xff9b, 0, 0, 0, 0, 0xff01, 0x00ff]);
  t.same(
    ipv6Groups('fe80::1%1.2.3.4'),
    [0xfe80, 0, 0, 0, 0, 0, 0, 1],
    'a zone that looks like an IPv4 address is dropped first',
  );
});

t.test('the allow list lets exactly its entries through, in any spelling', async (t) => {
  const p = createAddressPolicy(['127.0.0.1/32', '10.1.0.0/16', 'fd00::/64', '::ffff:192.168.5.0/120']);
  t.equal(p.refusal('127.0.0.1'), null);
  t.equal(p.refusal('127.0.0.2'), 'a loopback address');
  t.equal(p.refusal('::ffff:127.0.0.1'), null, 'the mapped spelling of an allowed address');
  t.equal(p.refusal('10.1.255.255'), null);
  t.equal(p.refusal('10.2.0.0'), 'a private address');
  t.equal(p.refusal('fd00::ffff'), null);
  t.equal(p.refusal('fd00:0:0:1::'), 'a unique-local address');
  t.equal(p.refusal('::ffff:192.168.5.7'), null, 'an allow entry written in the mapped form');
  t.equal(p.refusal('::ffff:0:127.0.0.1'), null, 'a translated form of an allowed address');
  t.equal(p.refusal('2002:7f00:0002::'), 'an IPv6 form of 127.0.0.2, a loopback address');
  t.throws(() => createAddressPolicy(['10.0.0.0/8', 'nope']), { message: '"nope" is not an IP address or CIDR range' });
});

t.test("CIDR lists: every prefix length up to the family's width, nothing else", async (t) => {
  const l = parseCidrList([' 10.0.0.0/8 ', '192.168.1.1', '::1', 'fd00::/8', '1.2.3.4/32', '::/128', '2001:db8::/128']);
  t.ok(l.check('10.9.9.9', 'ipv4'));
  t.ok(l.check('192.168.1.1', 'ipv4'));
  t.notOk(l.check('192.168.1.2', 'ipv4'), 'a single address is only itself');
  t.ok(l.check('fdff::1', 'ipv6'));
  t.notOk(l.check('8.8.8.8', 'ipv4'));
  t.ok(parseCidrList(['0.0.0.0/0']).check('8.8.8.8', 'ipv4'), '/0 is everything');
  t.ok(parseCidrList(['::/0']).check('2001:db8::1', 'ipv6'));
  for (const bad of [
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/-1',
    '10.0.0.0/8.5',
    '10.0.0.0/x',
    '10.0.0.0/',
    '10.0.0.0/ 8',
    '10.0.0.0/0x8',
    '10.0.0.0/1e1',
  ]) {
    t.throws(() => parseCidrList([bad]), { message: `"${bad}" has an invalid prefix length` }, bad);
  }
  for (const bad of ['', 'host.lan', '10.0.0/8', '/8'])
    t.throws(
      () => parseCidrList([bad]),
      { message: `"${bad}" is not an IP address or CIDR range` },
      JSON.stringify(bad),
    );
  t.same(normalizeAddress('::FFFF:10.0.0.1'), { address: '10.0.0.1', family: 4 });
  t.same(normalizeAddress('::1'), { address: '::1', family: 6 });
  t.same(normalizeAddress('10.0.0.1'), { address: '10.0.0.1', family: 4 });
  t.same(
    normalizeAddress('x::ffff:10.0.0.1'),
    { address: 'x::ffff:10.0.0.1', family: 4 },
    'only the whole mapped form is unwrapped',
  );
  t.same(
    normalizeAddress('::ffff:192.168.100.200'),
    { address: '192.168.100.200', family: 4 },
    'octets of several digits',
  );
  t.same(
    normalizeAddress('::ffff:1.2.3.4.5'),
    { address: '::ffff:1.2.3.4.5', family: 4 },
    'nothing after the last octet',
  );
  const list = parseCidrList(['10.0.0.0/8']);
  t.equal(inList(list, '::ffff:10.2.3.4'), true);
  t.equal(inList(list, '11.0.0.0'), false);
  t.equal(inList(list, '10.200.3.4'), true, 'a plain IPv4 address');
  t.equal(inList(parseCidrList(['fd00::/8']), 'fd12::1'), true);
});

t.test('per-instance allow lists: addresses, ranges and host names, normalised; mistakes named by index', async (t) => {
  t.equal(OUTBOUND_ALLOW_MAX, 32);
  const r = checkOutboundAllow([
    ' 192.168.1.10 ',
    '10.0.0.0/8',
    'NAS.lan.',
    'nas.lan',
    'fd00::/8',
    '192.168.1.300',
    '10.0.0.0/33',
    'bad_host',
    '1.2.3',
    'a/b',
    '-x.lan',
    'x-.lan',
    '',
  ]);
  t.same(
    r.value,
    ['192.168.1.10', '10.0.0.0/8', 'nas.lan', 'fd00::/8'],
    'trimmed, lower case, trailing dot dropped, duplicates removed',
  );
  t.same(
    r.problems.map((p) => p.entry),
    ['192.168.1.300', '10.0.0.0/33', 'bad_host', '1.2.3', 'a/b', '-x.lan', 'x-.lan', ''],
  );
  t.same(
    r.problems.map((p) => p.index),
    [5, 6, 7, 8, 9, 10, 11, 12],
  );
  const label63 = 'a'.repeat(63);
  t.same(
    checkOutboundAllow([`${label63}.lan`, `${'a'.repeat(64)}.lan`]).problems.map((p) => p.index),
    [1],
    'a label of 63 characters, not 64',
  );
  const name253 = `${Array.from({ length: 3 }, () => label63).join('.')}.${'b'.repeat(61)}`;
  t.equal(name253.length, 253);
  t.same(
    checkOutboundAllow([name253, `${name253}c`]).problems.map((p) => p.index),
    [1],
    'a name of 253 characters, not 254',
  );
  t.same(
    checkOutboundAllow(['a', 'a-b', 'x1.y2', 'a.b.c', '1and1.lan', '9.lan9']).problems,
    [],
    'one-label names, one-character labels, inner hyphens, leading digits',
  );
  t.equal(hostKey(' NAS.Lan. '), 'nas.lan');
  t.same(splitOutboundAllow([' 10.0.0.0/8', 'NAS.lan', '::1', '', '  ', 5 as unknown as string]), {
    cidrs: ['10.0.0.0/8', '::1'],
    hosts: ['nas.lan'],
  });
  t.same(splitOutboundAllow(null), { cidrs: [], hosts: [] });
  t.same(splitOutboundAllow(undefined), { cidrs: [], hosts: [] });
});

t.test(
  'allow entries wider than any private network are flagged, the private networks themselves are not',
  async (t) => {
    const wide = (entries: unknown[]) => wideAllowEntries(entries as string[]).map((w) => w.entry);
    t.same(
      wide([
        '10.0.0.0/8',
        '0.0.0.0/7',
        '0.0.0.0/0',
        'fc00::/7',
        '::/6',
        '::/0',
        '192.168.1.1',
        'nas.lan',
        '10.0.0.0/x',
        7,
      ]),
      ['0.0.0.0/7', '0.0.0.0/0', '::/6', '::/0'],
    );
    t.same(
      wide(['::ffff:0:0/96', '::ffff:0:0/103', '::ffff:0:0/104', '::FFFF:10.0.0.0/104', '::/95']),
      ['::ffff:0:0/96', '::ffff:0:0/103'],
      'mapped ranges count as IPv4 ranges; other IPv6 ranges of that size are narrow',
    );
    t.same(wide([' 0.0.0.0/1 ']), ['0.0.0.0/1'], 'trimmed');
    t.same(
      wide(['nas.lan/0', '0.0.0.0/x0', '0.0.0.0/0x', '0.0.0.0/0000', '0.0.0.0']),
      [],
      'only an address with a decimal prefix length',
    );
    t.same(
      wide(['::ffff:0:0/95', '::/96', '2001:db8::/100', '1::ffff:0:0/100']),
      [],
      'a /96 or longer IPv6 range that is not of mapped addresses, or a mapped one shorter than /96, is judged as IPv6',
    );
    t.same(wideAllowEntries(null), []);
    const [all, half, v6] = wideAllowEntries(['0.0.0.0/0', '128.0.0.0/1', '::/0']);
    t.match(all, {
      code: 'outbound_allow_too_wide',
      message: new RegExp(
        '^"0\\.0\\.0\\.0/0" opens every IPv4 address: every internal address in it ' +
          '\\(loopback, the cloud metadata address, private networks\\) becomes reachable',
      ),
    });
    t.match(half!.message, /^"128\.0\.0\.0\/1" opens a \/1 range of IPv4 addresses, wider than any private network:/);
    t.equal(
      all!.message,
      '"0.0.0.0/0" opens every IPv4 address: every internal address in it (loopback, the cloud metadata address, ' +
        'private networks) becomes reachable, which turns the protection against server-side request forgery ' +
        'off for them. List only the networks or hosts that are needed.',
      'the whole message, its advice included',
    );
    t.match(v6!.message, /opens every IPv6 address/);
    t.match(wideAllowEntries(['::ffff:0:0/96'])[0]!.message, /opens every IPv4 address/);
    t.ok(net.isIP('::ffff:0:0'));
  },
);
