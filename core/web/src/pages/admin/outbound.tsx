/**
 * Outbound access: every user's providers and targets with the private addresses or hosts each
 * may reach (`outbound_allow`), editable here by an administrator — a user's Immich on the NAS
 * needs the administrator to allow that one host for that user's provider.
 */
import { useState } from 'preact/hooks';
import { get, put } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { t } from '../../lib/i18n.ts';
import { pluginName, usePlugins } from '../../lib/plugins.ts';
import type { OutboundAllowEntry, OutboundAllowPage, Plugin } from '../../lib/types.ts';
import { Badge, Button, Empty, ErrorNote, Loading, Page } from '../../ui/basics.tsx';
import { shownName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';
import { allowEntryOk, allowValue, OutboundAllowEditor } from '../relay/outbound-allow.tsx';

/** One provider or target as GET /api/admin/outbound-allow lists it. */

const PAGE = 200;
const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export function OutboundPage() {
  const plugins = usePlugins();
  const [extra, setExtra] = useState<OutboundAllowEntry[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [query, setQuery] = useState('');
  const data = useAsync(async () => {
    const page = await get<OutboundAllowPage>('/api/admin/outbound-allow', { limit: PAGE });
    setExtra([]);
    setNext(page.next_offset);
    return page.items;
  }, []);
  const more = async () => {
    if (next === null) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      const page = await get<OutboundAllowPage>('/api/admin/outbound-allow', { limit: PAGE, offset: next });
      setExtra((e) => [...e, ...page.items]);
      setNext(page.next_offset);
    } catch (err) {
      setMoreError(err);
    } finally {
      setLoadingMore(false);
    }
  };
  const items = data.data ? [...data.data, ...extra] : undefined;
  const q = query.trim().toLowerCase();
  const shown = items?.filter(
    (i) =>
      !q ||
      [i.name, i.owner.email, i.address ?? '', i.plugin, ...i.outbound_allow].some((s) => s.toLowerCase().includes(q)),
  );
  return (
    <Page title={t('admin_outbound.title')} subtitle={t('admin_outbound.subtitle')}>
      <ErrorNote error={data.error} />
      {!items ? (
        <Loading />
      ) : !items.length ? (
        <Empty>{t('admin_outbound.empty')}</Empty>
      ) : (
        <div class="stack">
          <div class="filters card">
            <label class="field">
              <span class="field-label">{t('common.search')}</span>
              <input
                type="search"
                value={query}
                placeholder={t('admin_outbound.search_hint')}
                data-testid="outbound-search"
                onInput={(e) => setQuery(e.currentTarget.value)}
              />
            </label>
          </div>
          {!shown?.length ? (
            <Empty>{t('common.no_matches')}</Empty>
          ) : (
            <div class="cards">
              {shown.map((i) => (
                <AllowCard key={`${i.kind}:${i.id}`} item={i} plugins={plugins.data} />
              ))}
            </div>
          )}
          <ErrorNote error={moreError} />
          {next !== null && (
            <p>
              <Button busy={loadingMore} onClick={() => void more()}>
                {t('common.load_more')}
              </Button>
            </p>
          )}
        </div>
      )}
    </Page>
  );
}

function AllowCard({ item, plugins }: { item: OutboundAllowEntry; plugins: Plugin[] | undefined }) {
  const [saved, setSaved] = useState(item.outbound_allow);
  const [value, setValue] = useState(item.outbound_allow);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const cleaned = allowValue(value);
  const dirty = !same(cleaned, saved) || cleaned.length !== value.length;
  const valid = cleaned.every(allowEntryOk);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const updated = await put<OutboundAllowEntry>(`/api/admin/outbound-allow/${item.kind}/${item.id}`, {
        outbound_allow: cleaned,
      });
      setSaved(updated.outbound_allow);
      setValue(updated.outbound_allow);
      toast.ok(t('common.saved'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card item-card" data-testid="outbound-row" data-id={item.id}>
      <div class="card-head">
        <h2>{shownName(item.name)}</h2>
        <Badge tone={item.kind === 'provider' ? 'info' : 'neutral'}>{t(`admin_outbound.kind_${item.kind}`)}</Badge>
      </div>
      <div class="meta">
        <span class="wrap" data-testid="outbound-owner">
          {t('admin_outbound.owner', { email: item.owner.email })}
        </span>
        <span>{pluginName(plugins, item.plugin, item.kind)}</span>
        {!item.enabled && <Badge tone="warn">{t('status.disabled')}</Badge>}
        {!item.plugin_enabled && <Badge tone="warn">{t('admin_outbound.plugin_off')}</Badge>}
      </div>
      <p class="small wrap">
        <span class="muted">{t('admin_outbound.address')} </span>
        {item.address ? <code>{item.address}</code> : <span class="muted">{t('admin_outbound.no_address')}</span>}
      </p>
      <OutboundAllowEditor value={value} onChange={setValue} editable />
      <ErrorNote error={error} />
      {dirty && (
        <div class="form-actions">
          <Button
            onClick={() => {
              setValue(saved);
              setError(null);
            }}
          >
            {t('common.cancel')}
          </Button>
          <Button
            variant="primary"
            busy={busy}
            disabled={!valid}
            onClick={() => void save()}
            data-testid="outbound-save"
          >
            {t('common.save')}
          </Button>
        </div>
      )}
    </div>
  );
}
