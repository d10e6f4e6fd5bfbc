/**
 * The `outbound_allow` field of providers and targets: the private ranges or host names an
 * administrator lets that one instance reach (see core/src/net/instance-allow.ts). Only an
 * administrator may set or change it; every owner sees it.
 */
import Type from 'typebox';
import { HttpError, unprocessable } from '../../http/problem.ts';
import type { Logger } from '../../logging/logger.ts';
import { checkOutboundAllow, type WideAllowEntry, wideAllowEntries } from '../../net/instance-allow.ts';
import { outboundAllowOf } from '../../plugins/host.ts';
import type { PublicUser } from '../../users/users.ts';
import { OutboundAllowSchema } from '../vocabulary.ts';

export const OutboundAllowField = Type.Optional(OutboundAllowSchema);
/**
 * The entries of a stored list wider than any private network (`0.0.0.0/0`, `::/0`), each with a
 * sentence saying what it opens: API answers carry them as `outbound_allow_warnings`.
 */
export const outboundAllowWarnings = (stored: unknown): WideAllowEntry[] => wideAllowEntries(outboundAllowOf(stored));

/**
 * The list to store (a JSON array, or null for none) when the request sends `outbound_allow`,
 * `undefined` when it does not (the stored one stays). A non-administrator may send it only
 * unchanged; an entry that is neither a CIDR/address nor a host name is a 422 naming it. A changed
 * list with an entry wider than any private network is accepted with a warning in `log`.
 */
export function outboundAllowInput(
  user: PublicUser,
  sent: string[] | null | undefined,
  stored?: unknown,
  log?: Logger,
): string[] | null | undefined {
  if (sent === undefined) return undefined;
  const { value, problems } = checkOutboundAllow(sent ?? []);
  if (problems.length) {
    const first = problems[0]!;
    throw unprocessable(
      `"${first.entry}" is neither an IP address or CIDR range nor a host name.`,
      problems.map((p) => ({
        path: `body/outbound_allow/${p.index}`,
        message: `"${p.entry}" is not an IP address, CIDR range or host name`,
      })),
      'invalid_outbound_allow',
      { entry: first.entry },
    );
  }
  const before = outboundAllowOf(stored);
  const same = before.length === value.length && before.every((x, i) => x === value[i]);
  if (!same && user.role !== 'admin') {
    throw new HttpError(
      403,
      'outbound_allow_admin_only',
      'Only an administrator may change which private addresses or hosts an instance may reach.',
    );
  }
  const wide = same ? [] : wideAllowEntries(value);
  if (wide.length)
    log?.warn(
      { user_id: user.id, entries: wide.map((w) => w.entry) },
      `an outbound allow list was set wider than any private network: ${wide.map((w) => w.message).join(' ')}`,
    );
  return value.length ? value : null;
}
