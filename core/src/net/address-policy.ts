/**
 * Which addresses outbound connections may reach: everything public, nothing internal
 * (private, loopback, link-local, CGNAT, unique-local, unspecified, multicast, reserved),
 * unless the operator's allow-list says otherwise. IPv6 forms that embed an IPv4 address
 * (mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, compatible `::a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`, Teredo's client `2001:0:…`) are judged by the
 * embedded address; the local-use NAT64 block `64:ff9b:1::/48`, whose embedding depends on the
 * network's own prefix length, is refused whole.
 */
import net from 'node:net';
import { parseCidrList } from './cidr.ts';

/** Refused ranges, each with the words used in the refusal message. */
const DENIED: [label: string, cidrs: string[]][] = [
  ['an unspecified / "this network" address', ['0.0.0.0/8', '::/128']],
  ['a loopback address', ['127.0.0.0/8', '::1/128']],
  ['a private address', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['a carrier-grade NAT address', ['100.64.0.0/10']],
  ['a link-local address', ['169.254.0.0/16', 'fe80::/10', 'fec0::/10']],
  ['a unique-local address', ['fc00::/7']],
  ['a local-use NAT64 address', ['64:ff9b:1::/48']],
  ['a multicast address', ['224.0.0.0/4', 'ff00::/8']],
  ['a reserved or broadcast address', ['240.0.0.0/4', '192.0.0.0/24', '198.18.0.0/15']],
];

export interface AddressPolicy {
  /** Why `address` is refused, or null when it may be connected to. */
  refusal(address: string): string | null;
  /** IPv4-mapped IPv6 becomes plain IPv4; anything else is returned as is. */
  normalize(address: string): { address: string; family: 4 | 6 };
}

/** Expands an IPv6 address into its eight 16-bit groups (dotted IPv4 tails included). */
export function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

/** The IPv4 address an IPv6 address stands for, when it embeds one. */
function embeddedIpv4(groups: number[]): { v4: string; kind: 'mapped' | 'embedded' } | null {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return { v4: v4(groups[6]!, groups[7]!), kind: 'mapped' };
  // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765's stateless translation).
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0)
    return { v4: v4(groups[6]!, groups[7]!), kind: 'embedded' };
  // IPv4-compatible (::a.b.c.d, deprecated) but not :: or ::1 themselves (::2 is 0.0.0.2, in 0.0.0.0/8).
  if (zero(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return { v4: v4(groups[6]!, groups[7]!), kind: 'embedded' };
  // The well-known NAT64 prefix (RFC 6052): 64:ff9b::/96.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6))
    return { v4: v4(groups[6]!, groups[7]!), kind: 'embedded' };
  if (groups[0] === 0x2002) return { v4: v4(groups[1]!, groups[2]!), kind: 'embedded' };
  // Teredo (2001:0::/32): the client's IPv4 address, every bit inverted, in the last 32 bits.
  if (groups[0] === 0x2001 && groups[1] === 0)
    return { v4: v4(groups[6]! ^ 0xffff, groups[7]! ^ 0xffff), kind: 'embedded' };
  return null;
}

/** Builds the policy; a malformed allow-list entry throws naming the entry. */
export function createAddressPolicy(allowCidrs: string[]): AddressPolicy {
  const allow = parseCidrList(allowCidrs);
  const denied = DENIED.map(([label, cidrs]) => ({ label, list: parseCidrList(cidrs) }));
  const check = (list: net.BlockList, address: string, family: number) =>
    list.check(address, family === 6 ? 'ipv6' : 'ipv4');

  const normalize = (address: string): { address: string; family: 4 | 6 } => {
    const family = net.isIP(address);
    if (family === 6) {
      const inner = embeddedIpv4(ipv6Groups(address));
      if (inner?.kind === 'mapped') return { address: inner.v4, family: 4 };
    }
    return { address, family: family === 6 ? 6 : 4 };
  };

  const refusal = (raw: string): string | null => {
    const family = net.isIP(raw);
    if (!family) return 'not an IP address';
    if (check(allow, raw, family)) return null;
    const { address, family: fam } = normalize(raw);
    if (fam !== family && check(allow, address, fam)) return null;
    if (fam === 6) {
      const inner = embeddedIpv4(ipv6Groups(address));
      if (inner) {
        const innerReason = refusal(inner.v4);
        if (innerReason) return `an IPv6 form of ${inner.v4}, ${innerReason}`;
      }
    }
    for (const { label, list } of denied) if (check(list, address, fam)) return label;
    return null;
  };

  return { refusal, normalize };
}
