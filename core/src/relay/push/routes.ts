/**
 * Browser notifications (Web Push), the routes the web client's account page uses:
 *
 * - `GET /api/push/vapid-public-key`: the key a browser subscribes with (made on first call);
 * - `GET, POST /api/push/subscriptions`: the caller's subscribed browsers; subscribe one (the body
 *   is `PushSubscription.toJSON()` plus an optional `label`);
 * - `DELETE /api/push/subscriptions/{id}`, `POST /api/push/subscriptions/{id}/test`;
 * - `GET /sw.js`: the service worker that shows the notifications, at the site's root scope.
 *
 * Every route but the service worker needs a signed-in user and sees only that user's
 * subscriptions (another user's is "not found"). The auth secret is never answered.
 */
import fs from 'node:fs';
import Type, { type Static } from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { newId } from '../../http/ids.ts';
import { HttpError, notFound } from '../../http/problem.ts';
import { created, errors, IdParams, Locale, noContent, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import type { Locale as LocaleName } from '../../plugin-api/index.ts';
import { PushSubscriptionList, PushSubscriptionView, PushTestOutcome, VapidPublicKey } from '../definitions/push.ts';
import {
  MAX_SUBSCRIPTIONS_PER_USER,
  type PushDeps,
  resealWebPushSecrets,
  type SubscriptionRow,
  userSubscriptions,
  vapidPublicKey,
  WEBPUSH_KIND,
} from './store.ts';
import { sendTestPush } from './test-send.ts';
import { checkEndpoint, checkKeys, MAX_ENDPOINT_LENGTH } from './validate.ts';

const SubscribeBody = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: MAX_ENDPOINT_LENGTH }),
    /** What `PushSubscription.toJSON()` carries; not used (push services answer 404/410 once it has passed). */
    expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    keys: Type.Object(
      { p256dh: Type.String({ minLength: 1, maxLength: 200 }), auth: Type.String({ minLength: 1, maxLength: 100 }) },
      { additionalProperties: false },
    ),
    label: Type.Optional(
      Type.String({ maxLength: 100, description: 'What the user calls this browser, e.g. "Firefox on the laptop"' }),
    ),
  },
  { additionalProperties: false },
);
const TestBody = Type.Union([
  Type.Object({ locale: Type.Optional(Locale) }, { additionalProperties: false }),
  Type.Null(),
]);

/** The service worker ships with the web client's files; the core serves it (Vite builds only the app). */
const SERVICE_WORKER = new URL('../../../web/sw.js', import.meta.url);

/** A subscription as the API shows it: never its keys. */
function view(r: SubscriptionRow): Static<typeof PushSubscriptionView> {
  let host = '';
  try {
    host = new URL(r.endpoint).host;
  } catch {
    /* stored checked */
  }
  return {
    id: r.id,
    label: r.label,
    endpoint: r.endpoint,
    push_service: host,
    created_at: r.created_at,
    last_success_at: r.last_success_at ?? null,
  };
}

export function pushDeps(core: Core): PushDeps {
  return {
    db: core.db,
    atRest: core.atRest,
    clock: core.clock,
    publicUrl: () => core.config.publicUrl ?? '',
    mask: (v) => core.logs.secrets.add(v),
  };
}

export async function pushRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);
  const deps = pushDeps(core);
  // What an earlier key sealed is sealed again with the current one (the boot step of secrets at rest does the same for
  // plugin configs).
  const resealed = await resealWebPushSecrets(deps);
  if (resealed)
    core.logs.get('webpush').info({ resealed }, 'Web Push secrets sealed again with the current SERVICE_SECRET_KEY');

  const enabled = () => {
    if (!core.plugins.target(WEBPUSH_KIND))
      throw new HttpError(
        404,
        'webpush_not_enabled',
        'Browser notifications are not enabled on this service: the webpush target kind is not loaded ' +
          '(SERVICE_PLUGINS).',
      );
  };
  const ownedSubscription = async (id: string, userId: string) => {
    const row = await core.db.get<SubscriptionRow>('SELECT * FROM webpush_subscriptions WHERE id = ? AND user_id = ?', [
      id,
      userId,
    ]);
    if (!row) throw notFound('Subscription');
    return row;
  };

  let worker: Buffer | undefined;
  app.get('/sw.js', { schema: { hide: true } }, async (_req, reply) => {
    worker ??= fs.readFileSync(SERVICE_WORKER);
    // Checked for updates on every navigation; its scope is the whole site.
    return reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('service-worker-allowed', '/')
      .send(worker);
  });

  app.get(
    '/api/push/vapid-public-key',
    {
      schema: {
        tags: ['web-push'],
        summary: 'The VAPID public key browsers subscribe with (base64url)',
        response: {
          ...ok('The key (`public_key`).', VapidPublicKey),
          ...errors([404, 'The webpush target kind is not loaded (`webpush_not_enabled`).']),
        },
      },
      preHandler: auth,
    },
    async () => {
      enabled();
      return { public_key: await vapidPublicKey(deps) };
    },
  );

  app.get(
    '/api/push/subscriptions',
    {
      schema: {
        tags: ['web-push'],
        summary: 'Your subscribed browsers',
        response: { ...ok('Your subscribed browsers (`subscriptions`).', PushSubscriptionList) },
      },
      preHandler: auth,
    },
    async (req) => {
      return { subscriptions: (await userSubscriptions(core.db, caller(req).id)).map(view) };
    },
  );

  app.post(
    '/api/push/subscriptions',
    {
      schema: {
        tags: ['web-push'],
        summary: 'Subscribe a browser (the body is PushSubscription.toJSON(), with an optional label)',
        body: SubscribeBody,
        response: {
          ...ok('The browser was subscribed already: its keys or label are updated.', PushSubscriptionView),
          ...created('The browser is subscribed.', PushSubscriptionView),
          ...errors(
            [404, 'The webpush target kind is not loaded (`webpush_not_enabled`).'],
            [409, 'You have the most subscribed browsers allowed (`push_subscription_limit`).'],
          ),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      enabled();
      const user = caller(req);
      const b = req.body;
      const endpoint = await checkEndpoint(b.endpoint, core.outbound);
      const keys = checkKeys(b.keys);
      const label = (b.label ?? '').trim();
      const now = core.clock.now().toISOString();
      const { row, created } = await core.db.tx(async (q) => {
        const existing = await q.get<SubscriptionRow>('SELECT * FROM webpush_subscriptions WHERE endpoint = ?', [
          endpoint,
        ]);
        if (existing && existing.user_id === user.id) {
          // The same browser again (new keys after the browser renewed them, or a new label).
          await q.run('UPDATE webpush_subscriptions SET p256dh = ?, auth = ?, label = ? WHERE id = ?', [
            keys.p256dh,
            core.atRest.seal(keys.auth),
            label || existing.label,
            existing.id,
          ]);
          return {
            row: (await q.get<SubscriptionRow>('SELECT * FROM webpush_subscriptions WHERE id = ?', [existing.id]))!,
            created: false,
          };
        }
        // A browser belongs to whoever subscribed it last: another account's notifications stop coming to it.
        if (existing) await q.run('DELETE FROM webpush_subscriptions WHERE id = ?', [existing.id]);
        const count = Number(
          (await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM webpush_subscriptions WHERE user_id = ?', [user.id]))
            ?.n ?? 0,
        );
        if (count >= MAX_SUBSCRIPTIONS_PER_USER) {
          throw new HttpError(
            409,
            'push_subscription_limit',
            `You already have ${MAX_SUBSCRIPTIONS_PER_USER} subscribed browsers, the most allowed; remove one first.`,
            { params: { limit: MAX_SUBSCRIPTIONS_PER_USER } },
          );
        }
        const id = newId();
        await q.run(
          'INSERT INTO webpush_subscriptions (id, user_id, endpoint, p256dh, auth, label, created_at) ' +
            'VALUES (?, ?, ?, ?, ?, ?, ?)',
          [id, user.id, endpoint, keys.p256dh, core.atRest.seal(keys.auth), label, now],
        );
        return {
          row: (await q.get<SubscriptionRow>('SELECT * FROM webpush_subscriptions WHERE id = ?', [id]))!,
          created: true,
        };
      });
      reply.code(created ? 201 : 200);
      return view(row);
    },
  );

  app.delete(
    '/api/push/subscriptions/:id',
    {
      schema: {
        tags: ['web-push'],
        summary: 'Unsubscribe a browser',
        params: IdParams,
        response: { ...noContent('Unsubscribed.') },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const row = await ownedSubscription(req.params.id, user.id);
      await core.db.run('DELETE FROM webpush_subscriptions WHERE id = ? AND user_id = ?', [row.id, user.id]);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/push/subscriptions/:id/test',
    {
      schema: {
        tags: ['web-push'],
        summary: 'Send a test notification to one browser now',
        params: IdParams,
        body: Type.Optional(TestBody),
        response: {
          ...ok(
            'The outcome of the test push, and whether the push service took the subscription away (`removed`).',
            PushTestOutcome,
          ),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      enabled();
      const user = caller(req);
      const row = await ownedSubscription(req.params.id, user.id);
      const locale: LocaleName = req.body?.locale ?? (user.locale === 'ru' ? 'ru' : 'en');
      const result = await sendTestPush(core, deps, user.id, row.id, locale);
      // A push service that answered 404 or 410 took the subscription away.
      const removed = !(await core.db.get('SELECT 1 AS x FROM webpush_subscriptions WHERE id = ?', [row.id]));
      return { ...result, removed };
    },
  );
}
