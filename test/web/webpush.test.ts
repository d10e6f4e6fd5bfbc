/**
 * "Notify this browser" on the account page, in a real Chromium: the page registers the service
 * worker the core serves at /sw.js, subscribes, lists the browser as "This browser", sends it a
 * test that the loopback push service decrypts, and removes it. A trusted push event delivered to
 * that service worker (DevTools' ServiceWorker.deliverPushMessage) shows a notification with the
 * payload's title, body, tag and link.
 *
 * Headless Chromium has no push service to subscribe with (Chrome's is Google's, unreachable
 * offline), so `PushManager.prototype.subscribe` and `getSubscription` are stubbed to hand out a
 * subscription of the fake push service, made with the service's VAPID key: everything after
 * the subscription (the API, the encryption, VAPID, the push service) is real.
 */
import t from 'tap';
import { startFakePushService } from '../../plugins/target-webpush/test/fakes/push-service.ts';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const fake = await startFakePushService();
const svc = await startService({
  SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/target-webpush`,
  SERVICE_LOG_LEVEL: 'WARNING',
});
const b = await openBrowser(undefined, { shots: 'webpush-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await fake.close();
});

t.test('a user subscribes this browser, tests it and removes it', async (t) => {
  const user = await svc.user('dana@example.com');
  const key = (await svc.request('GET', '/api/push/vapid-public-key', { token: user.token })).body.public_key as string;
  const browserSub = fake.subscribe(key);
  await b.context.grantPermissions(['notifications'], { origin: svc.url });
  // The stub: one subscription, made with the service's key, kept for the page's session.
  await b.context.addInitScript(
    ({ sub, key }) => {
      const bytes = (s: string) =>
        Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4)), (c) =>
          c.charCodeAt(0),
        );
      const made = () => ({
        endpoint: sub.endpoint,
        expirationTime: null,
        options: { userVisibleOnly: true, applicationServerKey: bytes(key).buffer },
        toJSON: () => ({ endpoint: sub.endpoint, expirationTime: null, keys: sub.keys }),
        unsubscribe: async () => {
          sessionStorage.removeItem('stub-push');
          return true;
        },
      });
      PushManager.prototype.subscribe = async function subscribe() {
        sessionStorage.setItem('stub-push', '1');
        return made() as unknown as PushSubscription;
      };
      PushManager.prototype.getSubscription = async function getSubscription() {
        return (sessionStorage.getItem('stub-push') ? made() : null) as unknown as PushSubscription;
      };
    },
    { sub: browserSub, key },
  );

  await step('open the account page', async () => {
    await b.logIn(svc.url, user.email, 'user password 1');
    await page.goto(`${svc.url}/#/account`);
    await page.getByRole('heading', { name: 'Notify this browser' }).waitFor();
    // The heading comes first; the list of browsers follows once the account's subscriptions are read.
    t.ok(
      await page
        .getByTestId('push-none')
        .waitFor()
        .then(
          () => true,
          () => false,
        ),
      'no browser yet',
    );
  });

  await step('subscribe', async () => {
    await page.getByTestId('push-subscribe').click();
    await page.getByTestId('push-row').waitFor();
    const row = page.getByTestId('push-row');
    t.match(
      await row.textContent(),
      /Chrome on Linux[\s\S]*This browser[\s\S]*no notification yet/,
      'named after the browser, marked as this one',
    );
    const listed = (await svc.request('GET', '/api/push/subscriptions', { token: user.token })).body.subscriptions;
    t.match(listed, [{ endpoint: browserSub.endpoint, label: 'Chrome on Linux' }], 'the service has it');
    const reg = await page.evaluate(async () => {
      const r = await navigator.serviceWorker.ready;
      return { scope: r.scope, script: r.active?.scriptURL };
    });
    t.same(
      reg,
      { scope: `${svc.url}/`, script: `${svc.url}/sw.js` },
      'the service worker is registered at the site root',
    );
  });

  await step('send a test', async () => {
    await page.getByTestId('push-test').click();
    await page.getByText('Test sent. Delivered to 1 of 1 subscribed browsers.').waitFor();
    const got = await until(
      () => fake.received.find((r) => r.endpoint === browserSub.endpoint),
      'the test at the push service',
    );
    t.match(
      JSON.parse(got!.plaintext),
      { title: 'Herald: test notification', test: true, lang: 'en' },
      'decrypted by the push service',
    );
    await page.reload();
    t.match(await page.getByTestId('push-row').textContent(), /last notification/, 'the last delivery is shown');
    await b.shot('webpush-account');
  });

  await step('the service worker shows a pushed message', async () => {
    const cdp = await b.context.newCDPSession(page);
    const registrations: { registrationId: string; scopeURL: string }[] = [];
    cdp.on(
      'ServiceWorker.workerRegistrationUpdated',
      (e: { registrations: { registrationId: string; scopeURL: string }[] }) => {
        registrations.push(...e.registrations);
      },
    );
    await cdp.send('ServiceWorker.enable');
    const reg = (await until(() => registrations.find((r) => r.scopeURL === `${svc.url}/`), 'the registration'))!;
    const payload = {
      title: 'ALARM boiler',
      body: 'pressure low',
      url: 'https://elsewhere.example/#/events?event=e-7',
      tag: 'e-7',
      severity: 'critical',
      lang: 'en',
    };
    const notifications = () =>
      page.evaluate(async () =>
        (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({
          title: n.title,
          body: n.body,
          tag: n.tag,
          url: n.data?.url,
          sticky: n.requireInteraction,
        })),
      );
    // DevTools now and then drops a message delivered right after ServiceWorker.enable (about one
    // run in three here, the worker running and activated): delivered again, three times at most.
    // One tag, so a second delivery replaces the first notification rather than adding one.
    let shown: Awaited<ReturnType<typeof notifications>> = [];
    for (let attempt = 0; attempt < 3 && !shown.length; attempt++) {
      await cdp.send('ServiceWorker.deliverPushMessage', {
        origin: svc.url,
        registrationId: reg.registrationId,
        data: JSON.stringify(payload),
      });
      shown =
        (await until(() => notifications().then((l) => (l.length ? l : null)), 'the notification', 3000).catch(
          () => [],
        )) ?? [];
    }
    t.same(
      shown,
      [{ title: 'ALARM boiler', body: 'pressure low', tag: 'e-7', url: `${svc.url}/#/events?event=e-7`, sticky: true }],
      'shown, its link kept on this site',
    );
    await cdp.detach();
  });

  await step('remove it', async () => {
    await page.getByTestId('push-row').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Really delete?' }).click();
    await page.getByTestId('push-none').waitFor();
    t.same((await svc.request('GET', '/api/push/subscriptions', { token: user.token })).body.subscriptions, []);
    t.equal(
      await page.evaluate(
        async () => (await (await navigator.serviceWorker.ready).pushManager.getSubscription()) === null,
      ),
      true,
      'unsubscribed in the browser too',
    );
  });

  await page.setViewportSize({ width: 390, height: 844 });
  await b.shot('webpush-account-phone');
  t.same(b.problems, [], 'no console errors');
});
