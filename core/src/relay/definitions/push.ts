/** Browser notifications as the API shows them: `GET /api/push/vapid-public-key`, the subscriptions and a test push. */
import Type from 'typebox';
import { Uuid } from '../../http/schemas.ts';
import { Nullable, Time } from './common.ts';

/** A subscribed browser: never its keys. */
export const PushSubscriptionView = Type.Object({
  id: Uuid,
  label: Type.String(),
  endpoint: Type.String(),
  /** The host of the push service the browser uses. */
  push_service: Type.String(),
  created_at: Time,
  last_success_at: Nullable(Time),
});
export const PushSubscriptionList = Type.Object({ subscriptions: Type.Array(PushSubscriptionView) });
export const VapidPublicKey = Type.Object({ public_key: Type.String() });
/** The outcome of a test push, and whether the push service took the subscription away. */
export const PushTestOutcome = Type.Object({
  ok: Type.Boolean(),
  detail: Type.String(),
  status_code: Type.Optional(Type.Integer()),
  removed: Type.Boolean(),
});
