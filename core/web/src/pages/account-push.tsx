/**
 * "Notify this browser" on the account page: subscribes this browser to Web Push (the service
 * worker at /sw.js shows the notifications of the user's webpush targets), lists the user's
 * subscribed browsers, sends a test to one, removes one. Hidden when the service does not load
 * the webpush target kind.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, del, get, post } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { dateTime, locale, t } from '../lib/i18n.ts';
import { loadPlugins } from '../lib/plugins.ts';
import type { PushSubscription, PushSubscriptions, PushTestOutcome, VapidPublicKey } from '../lib/types.ts';
import { Badge, Button, Card, ConfirmButton, ErrorNote, Loading, Note } from '../ui/basics.tsx';
import { toast } from '../ui/toast.tsx';

/** Whether this browser can subscribe at all: a service worker, the Push API and notifications, in a secure context. */
export const pushSupported = (): boolean =>
  typeof window !== 'undefined' &&
  window.isSecureContext &&
  'serviceWorker' in navigator &&
  'PushManager' in window &&
  'Notification' in window;

/** A base64url key as the bytes `pushManager.subscribe` wants. */
export function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = base64url.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (base64url.length % 4)) % 4);
  const raw = atob(b64);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** "Firefox on Linux": what this browser is called in the list, from its user agent. */
export function browserLabel(ua: string): string {
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /OPR\//.test(ua)
      ? 'Opera'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Chrom(e|ium)\//.test(ua)
          ? 'Chrome'
          : /Safari\//.test(ua)
            ? 'Safari'
            : '';
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad/.test(ua)
      ? 'iOS'
      : /Mac OS X/.test(ua)
        ? 'macOS'
        : /Windows/.test(ua)
          ? 'Windows'
          : /Linux/.test(ua)
            ? 'Linux'
            : '';
  if (browser && os) return t('push.label', { browser, os });
  return browser || os || t('push.unknown_browser');
}

const sameKey = (a: ArrayBuffer | null | undefined, b: Uint8Array): boolean => {
  if (!a || a.byteLength !== b.length) return false;
  const x = new Uint8Array(a);
  return x.every((v, i) => v === b[i]);
};

/** This browser's registration of /sw.js, registered now when it is not there yet. */
async function registration(): Promise<ServiceWorkerRegistration> {
  await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  return navigator.serviceWorker.ready;
}

export function NotifyThisBrowser() {
  // Nothing to offer (and nothing asked) when the service does not load the webpush target kind.
  const enabled = useAsync(
    () => loadPlugins().then((l) => l.some((p) => p.kind === 'target' && p.id === 'webpush')),
    [],
  );
  const key = useAsync(
    async () => (enabled.data ? (await get<VapidPublicKey>('/api/push/vapid-public-key')).public_key : undefined),
    [enabled.data],
  );
  const list = useAsync(
    async () => (enabled.data ? (await get<PushSubscriptions>('/api/push/subscriptions')).subscriptions : undefined),
    [enabled.data],
  );
  const [mine, setMine] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [denied, setDenied] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const supported = pushSupported();

  // The endpoint of this browser's subscription, when it has one: its row is marked "this browser".
  useEffect(() => {
    if (!supported) return;
    void navigator.serviceWorker
      .getRegistration('/')
      .then((r) => r?.pushManager.getSubscription())
      .then((s) => setMine(s?.endpoint ?? null))
      .catch(() => {});
  }, [supported]);

  if (!enabled.data) return null;

  const subscribe = async () => {
    if (!key.data) return;
    setBusy(true);
    setError(null);
    setDenied(false);
    try {
      const permission = await Notification.requestPermission();
      if (permission !== 'granted') {
        setDenied(true);
        return;
      }
      const reg = await registration();
      const server = keyBytes(key.data);
      let sub = await reg.pushManager.getSubscription();
      // Made with another service's (or an earlier) key: the push service would refuse our signature.
      if (sub && !sameKey(sub.options.applicationServerKey, server)) {
        await sub.unsubscribe();
        sub = null;
      }
      sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: server });
      const json = sub.toJSON() as {
        endpoint: string;
        expirationTime?: number | null;
        keys: { p256dh: string; auth: string };
      };
      await post('/api/push/subscriptions', {
        endpoint: json.endpoint,
        expirationTime: json.expirationTime ?? null,
        keys: json.keys,
        label: browserLabel(navigator.userAgent),
      });
      setMine(json.endpoint);
      await list.reload();
      toast.ok(t('push.subscribed'));
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'client', String((err as Error)?.message ?? err)));
    } finally {
      setBusy(false);
    }
  };

  const test = async (s: PushSubscription) => {
    try {
      const r = await post<PushTestOutcome>(`/api/push/subscriptions/${s.id}/test`, {
        locale: locale(),
      });
      if (r.removed) {
        toast.error(new ApiError(0, 'client', t('push.gone')));
        await list.reload();
        return;
      }
      if (r.ok) toast.ok(t('push.test_sent', { detail: r.detail }));
      else toast.error(new ApiError(0, 'client', r.detail));
    } catch (err) {
      toast.error(err);
    }
  };

  const remove = async (s: PushSubscription) => {
    await del(`/api/push/subscriptions/${s.id}`);
    if (s.endpoint === mine) {
      // This browser: stop its push subscription too, so the push service forgets it.
      const sub = await navigator.serviceWorker
        .getRegistration('/')
        .then((r) => r?.pushManager.getSubscription())
        .catch(() => null);
      await sub?.unsubscribe().catch(() => false);
      setMine(null);
    }
    await list.reload();
  };

  return (
    <Card title={t('push.title')}>
      <div class="stack" data-testid="push-section">
        <p class="muted">{t('push.lead')}</p>
        {!supported ? (
          <Note tone="warn">{t('push.unsupported')}</Note>
        ) : (
          <div>
            <Button
              variant="primary"
              icon="plus"
              busy={busy}
              disabled={!key.data}
              onClick={subscribe}
              data-testid="push-subscribe"
            >
              {t('push.subscribe')}
            </Button>
          </div>
        )}
        {denied && <Note tone="warn">{t('push.denied')}</Note>}
        <ErrorNote error={error ?? key.error ?? list.error} />
        {!list.data ? (
          <Loading />
        ) : !list.data.length ? (
          <p class="muted small" data-testid="push-none">
            {t('push.none')}
          </p>
        ) : (
          <ul class="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }} data-testid="push-list">
            {list.data.map((s) => (
              <li
                key={s.id}
                class="row"
                style={{ flexWrap: 'wrap', justifyContent: 'space-between' }}
                data-testid="push-row"
                data-id={s.id}
              >
                <div>
                  <strong>{s.label || s.push_service}</strong>{' '}
                  {s.endpoint === mine && <Badge tone="info">{t('push.this_browser')}</Badge>}
                  <div class="muted small">
                    {t('push.subscribed_at', { time: dateTime(s.created_at) })} ·{' '}
                    {s.last_success_at
                      ? t('push.last_delivered', { time: dateTime(s.last_success_at) })
                      : t('push.never_delivered')}
                  </div>
                </div>
                <div class="row-actions">
                  <Button small icon="send" onClick={() => test(s)} data-testid="push-test">
                    {t('push.test')}
                  </Button>
                  <ConfirmButton label={t('push.remove')} onConfirm={() => remove(s)} />
                </div>
              </li>
            ))}
          </ul>
        )}
      </div>
    </Card>
  );
}
