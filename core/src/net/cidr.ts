import net from 'node:net';

/** Parses `a.b.c.d/n`, `a.b.c.d`, IPv6 forms; throws with the bad entry named. */
export function parseCidrList(entries: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    const [addr, bits] = entry.split('/');
    const family = net.isIP(addr ?? '');
    if (!family) throw new Error(`"${entry}" is not an IP address or CIDR range`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr!, type);
    else {
      // Digits only: Number('') is 0, so `10.0.0.0/` would otherwise open every address.
      const n = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (!Number.isInteger(n) || n > (family === 6 ? 128 : 32))
        throw new Error(`"${entry}" has an invalid prefix length`);
      list.addSubnet(addr!, n, type);
    }
  }
  return list;
}

/** Unwraps IPv4-mapped IPv6 (`::ffff:1.2.3.4`) so policies see the real IPv4 address. */
export function normalizeAddress(address: string): { address: string; family: 4 | 6 } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1]!, family: 4 };
  const f = net.isIP(address);
  return { address, family: f === 6 ? 6 : 4 };
}

export function inList(list: net.BlockList, address: string): boolean {
  const n = normalizeAddress(address);
  return list.check(n.address, n.family === 6 ? 'ipv6' : 'ipv4');
}
