/**
 * "Send a test" for one browser: an instance of the `webpush` target plugin of its own, whose
 * `webPush` reaches that one subscription, sends a short message in the user's language through
 * the plugin's normal path (encryption, VAPID, the outbound client and its policy).
 */
import type { Core } from '../../core.ts';
import { newId } from '../../http/ids.ts';
import { bindCredentials } from '../../net/outbound.ts';
import type { InstanceStore, Locale, OutboundMessage } from '../../plugin-api/index.ts';
import { errorCode } from '../../plugin-api/index.ts';
import { accountUrl, type PushDeps, WEBPUSH_KIND, webPushAccess } from './store.ts';

const TEXT: Record<Locale, { title: string; body: string }> = {
  en: { title: 'Herald: test notification', body: 'This browser will show Herald notifications.' },
  ru: {
    title: 'Herald: тестовое уведомление',
    body: 'Этот браузер будет показывать уведомления Herald.',
  },
};

/** Nothing to remember between the sends of a one-off instance. */
class OneOffStore implements InstanceStore {
  private data = new Map<string, unknown>();
  async get<T>(key: string) {
    return this.data.get(key) as T | undefined;
  }
  async set(key: string, value: unknown) {
    this.data.set(key, value);
  }
  async setIfAbsent(key: string, value: unknown) {
    if (this.data.has(key)) return false;
    this.data.set(key, value);
    return true;
  }
  async delete(key: string) {
    this.data.delete(key);
  }
}

export interface TestOutcome {
  ok: boolean;
  detail: string;
  status_code?: number;
}

export async function sendTestPush(
  core: Core,
  deps: PushDeps,
  userId: string,
  subscriptionId: string,
  locale: Locale,
): Promise<TestOutcome> {
  const plugin = core.plugins.target(WEBPUSH_KIND);
  if (!plugin) return { ok: false, detail: 'The webpush target kind is not enabled on this service.' };
  const abort = new AbortController();
  const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(30_000)]);
  const cfg = plugin.validateConfig({}, { undeclared: 'drop' });
  if (!cfg.ok) return { ok: false, detail: 'The webpush target kind refuses an empty configuration.' };
  try {
    const instance = await plugin.def.create({
      instanceId: `webpush-test-${subscriptionId}`,
      ownerId: userId,
      config: cfg.value,
      log: core.logs.get('plugin.webpush', { subscription_id: subscriptionId }),
      http: bindCredentials(core.outbound, { headers: plugin.def.manifest.credentialHeaders, secrets: [] }),
      store: new OneOffStore(),
      clock: core.clock,
      signal,
      webPush: webPushAccess(deps, userId, { only: subscriptionId, link: accountUrl(deps.publicUrl()) }),
    });
    try {
      await instance.start?.();
      const text = TEXT[locale];
      const message: OutboundMessage = {
        deliveryId: newId(),
        eventId: newId(),
        eventType: 'test_message',
        severity: 'info',
        locale,
        format: 'text',
        title: text.title,
        body: text.body,
        plainTitle: text.title,
        plainBody: text.body,
        test: true,
      };
      const r = await instance.send(message, { signal, attempt: 1 });
      return { ok: true, detail: (r && r.detail) || 'The test notification was delivered.' };
    } finally {
      abort.abort();
      await Promise.resolve(instance.stop?.()).catch(() => {});
    }
  } catch (err) {
    const status = Number((err as { statusCode?: number }).statusCode ?? 0) || 0;
    const prefix = errorCode(err) === 'AUTH_FAILED' ? 'The credential was rejected: ' : '';
    return { ok: false, detail: `${prefix}${(err as Error).message}`, ...(status ? { status_code: status } : {}) };
  }
}
