/**
 * The per-instance outbound allow list an administrator may give one provider or target
 * (`outbound_allow`): CIDR ranges or single addresses, and DNS host names, that this instance's
 * plugin may reach on top of the service-wide `SERVICE_OUTBOUND_ALLOW_CIDRS` (a NAS on the LAN
 * without opening the LAN to every plugin). Public addresses are always reachable anyway.
 */
import net from 'node:net';
import { parseCidrList } from './cidr.ts';

/** At most this many entries per instance. */
export const OUTBOUND_ALLOW_MAX = 32;

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens, at most 253 characters. */
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host name as compared: lower case, without a trailing dot. */
export const hostKey = (host: string): string => host.trim().toLowerCase().replace(/\.$/, '');

export interface SplitAllow {
  cidrs: string[];
  hosts: string[];
}

/**
 * Checks each entry: a CIDR range or an IP address (parsed), else a DNS host name. Returns the
 * entries normalised (trimmed, host names in lower case, duplicates removed) and the problems by
 * index (`invalid` entries, with the entry).
 */
export function checkOutboundAllow(entries: string[]): {
  value: string[];
  problems: { index: number; entry: string }[];
} {
  const value: string[] = [];
  const problems: { index: number; entry: string }[] = [];
  entries.forEach((raw, index) => {
    const entry = raw.trim();
    const addr = entry.split('/')[0] ?? '';
    let ok = false;
    let norm = entry;
    if (net.isIP(addr)) {
      try {
        parseCidrList([entry]);
        ok = true;
      } catch {
        ok = false;
      }
    } else if (!entry.includes('/')) {
      norm = hostKey(entry);
      // A name that is all digits and dots is a mistyped address, not a host.
      ok = HOST.test(norm) && !/^[\d.]+$/.test(norm);
    }
    if (!ok) problems.push({ index, entry });
    else if (!value.includes(norm)) value.push(norm);
  });
  return { value, problems };
}

/** Splits a checked list into CIDRs/addresses and host names. */
export function splitOutboundAllow(entries: readonly string[] | null | undefined): SplitAllow {
  const cidrs: string[] = [];
  const hosts: string[] = [];
  for (const raw of entries ?? []) {
    if (typeof raw !== 'string' || !raw.trim()) continue;
    const e = raw.trim();
    if (net.isIP(e.split('/')[0] ?? '')) cidrs.push(e);
    else hosts.push(hostKey(e));
  }
  return { cidrs, hosts };
}

/** Shortest prefix of a private network: 10.0.0.0/8 (IPv4), fc00::/7 (IPv6). */
const NARROWEST_WIDE = { 4: 8, 6: 7 } as const;

/** An allow-list entry wider than any private network, and why that matters. */
export interface WideAllowEntry {
  entry: string;
  code: 'outbound_allow_too_wide';
  message: string;
}

/**
 * The CIDR entries of an allow list wider than any private network (`0.0.0.0/0`, `::/0`,
 * `0.0.0.0/1`, `::ffff:0:0/96`): accepted, since an administrator may mean it, but each one lets
 * the instance (or, in `SERVICE_OUTBOUND_ALLOW_CIDRS`, every plugin) reach loopback, cloud metadata
 * and every private address it covers, which is what the SSRF protection is there to stop.
 */
export function wideAllowEntries(entries: readonly string[] | null | undefined): WideAllowEntry[] {
  const out: WideAllowEntry[] = [];
  for (const raw of entries ?? []) {
    if (typeof raw !== 'string') continue;
    const entry = raw.trim();
    const [addr = '', bits] = entry.split('/');
    const family = net.isIP(addr);
    if (!family || bits === undefined || !/^\d{1,3}$/.test(bits)) continue;
    let prefix = Number(bits);
    let fam: 4 | 6 = family === 6 ? 6 : 4;
    // A range of IPv4-mapped addresses (::ffff:0:0/96 and inside it) is an IPv4 range in disguise.
    if (fam === 6 && prefix >= 96 && /^::ffff:/i.test(addr)) {
      prefix -= 96;
      fam = 4;
    }
    if (prefix >= NARROWEST_WIDE[fam]) continue;
    const what =
      prefix === 0
        ? `every IPv${fam} address`
        : `a /${prefix} range of IPv${fam} addresses, wider than any private network`;
    out.push({
      entry,
      code: 'outbound_allow_too_wide',
      message:
        `"${entry}" opens ${what}: every internal address in it (loopback, the cloud metadata address, ` +
        'private networks) becomes reachable, which turns the protection against server-side request forgery ' +
        'off for them. List only the networks or hosts that are needed.',
    });
  }
  return out;
}
