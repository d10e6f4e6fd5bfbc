/**
 * The outbound allow list of one provider or target (`outbound_allow`): the private ranges or host
 * names an administrator lets this instance alone reach (a NAS on the LAN). Administrators edit it
 * as a small list; other users only see it when one is set.
 */
import { t } from '../../lib/i18n.ts';
import { useSession } from '../../lib/session.ts';
import { Button } from '../../ui/basics.tsx';

/** Whether the logged-in user may set allow lists (the service refuses anyone else). */
export function useCanSetAllow(): boolean {
  return useSession().user?.role === 'admin';
}

const IPV4 = /^(\d{1,3})(\.\d{1,3}){3}(\/\d{1,2})?$/;
const HOST = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
/** A light check before sending (the service checks each entry exactly): IPv4 or CIDR, IPv6, or a host name. */
export const allowEntryOk = (v: string): boolean => {
  const s = v.trim();
  if (IPV4.test(s))
    return (
      s
        .split('/')[0]!
        .split('.')
        .every((n) => Number(n) <= 255) &&
      (!s.includes('/') || Number(s.split('/')[1]) <= 32)
    );
  if (s.includes(':')) return /^[0-9a-f:.]+(\/\d{1,3})?$/i.test(s);
  return HOST.test(s) && !/^[\d.]+$/.test(s);
};

/** The entries as sent: trimmed, blanks left out. */
export const allowValue = (rows: string[]): string[] => rows.map((r) => r.trim()).filter(Boolean);

export function OutboundAllowEditor({
  value,
  onChange,
  editable,
}: {
  value: string[];
  onChange: (v: string[]) => void;
  editable: boolean;
}) {
  if (!editable) {
    if (!value.length) return null;
    return (
      <div class="subform" data-testid="outbound-allow-readonly">
        <p class="hint">{t('allow.readonly', { count: value.length })}</p>
        <ul class="allow-list">
          {value.map((v) => (
            <li key={v}>
              <code>{v}</code>
            </li>
          ))}
        </ul>
      </div>
    );
  }
  const set = (i: number, v: string) => onChange(value.map((x, j) => (j === i ? v : x)));
  return (
    <fieldset class="subform" data-testid="outbound-allow">
      <legend>{t('allow.title')}</legend>
      <p class="hint">{t('allow.help')}</p>
      {value.map((v, i) => {
        const bad = v.trim() !== '' && !allowEntryOk(v);
        return (
          <div class="allow-row" key={i}>
            <input
              value={v}
              maxLength={253}
              placeholder="192.168.1.10"
              aria-label={t('allow.entry', { n: i + 1 })}
              aria-invalid={bad ? 'true' : undefined}
              data-testid="outbound-allow-entry"
              onInput={(e) => set(i, e.currentTarget.value)}
            />
            <Button
              small
              variant="ghost"
              icon="trash"
              aria-label={t('allow.remove', { entry: v || String(i + 1) })}
              onClick={() => onChange(value.filter((_, j) => j !== i))}
            />
            {bad && (
              <span class="small hint-danger" role="alert">
                {t('allow.invalid')}
              </span>
            )}
          </div>
        );
      })}
      {value.length < 32 && (
        <p>
          <Button small icon="plus" onClick={() => onChange([...value, ''])} data-testid="outbound-allow-add">
            {t('allow.add')}
          </Button>
        </p>
      )}
    </fieldset>
  );
}
