/** The sender allow list: addresses match exactly, domains match themselves and their subdomains (any case). */

/** The domain of an address, lower-cased ('' when it has none). */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at >= 0 ? address.slice(at + 1).toLowerCase() : '';
}

/** Whether `sender` passes `allowed`; an empty list lets every sender through, the null sender (`''`) only that. */
export function senderAllowed(allowed: readonly string[], sender: string): boolean {
  if (!allowed.length) return true;
  const address = sender.trim().toLowerCase();
  if (!address) return false;
  const domain = domainOf(address);
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    if (e.includes('@') && !e.startsWith('@')) return e === address;
    const d = e.replace(/^@/, '');
    return domain === d || domain.endsWith(`.${d}`);
  });
}
