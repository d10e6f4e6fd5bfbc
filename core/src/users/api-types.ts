/**
 * The web client's source of the account, sign-in, health and operator-settings shapes: type-only
 * exports of the API's response schemas (`core/web/src/lib/types.ts` re-exports them), so that the
 * client reads what the server declares and serializes. Keep the names stable; add, do not rename.
 */
import type { Static } from 'typebox';
import type { PasswordChangeBody as PasswordChangeBodySchema } from '../auth/routes.ts';
import type { Health as HealthSchema, Ready as ReadySchema } from '../health/definition.ts';
import type { AssistantSettingsView } from '../settings/definition.ts';
import type {
  Registered as RegisteredSchema,
  Role as RoleSchema,
  Session as SessionSchema,
  SetupState as SetupStateSchema,
  UserList as UserListSchema,
  UserView,
} from './definition.ts';

export type Role = Static<typeof RoleSchema>;
/** An account: `GET /api/v1/users/me`, the admin users' routes, a login's `user`. */
export type User = Static<typeof UserView>;
/** `GET /api/v1/admin/users`. */
export type UserList = Static<typeof UserListSchema>;
/** A login's answer (also setup's and a password change's). */
export type Session = Static<typeof SessionSchema>;
export type LoginAnswer = Session;
/** `GET /api/setup`. */
export type SetupState = Static<typeof SetupStateSchema>;
/** `POST /api/v1/auth/register`. */
export type Registered = Static<typeof RegisteredSchema>;
/** `GET /api/health`. */
export type Health = Static<typeof HealthSchema>;
/** `GET /api/ready` (200 and 503 alike). */
export type Ready = Static<typeof ReadySchema>;
/** `GET, PATCH /api/v1/admin/settings`. */
export type Settings = Static<typeof AssistantSettingsView>;
/** `POST /api/auth/password`'s body. */
export type PasswordChangeBody = Static<typeof PasswordChangeBodySchema>;
