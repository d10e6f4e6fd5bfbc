/**
 * The user account, defined once: its fields' schemas, the administrator's create and change bodies,
 * the account as the API shows it (`UserView`), the `users` row, and the answers of the sign-in
 * routes that carry an account (login, setup, password change). Routes, the guard and the web
 * client's types (users/api-types.ts) derive from here.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../db/database.ts';
import { optional } from '../http/optional.ts';
import { Locale, Uuid } from '../http/schemas.ts';

export const Role = Type.Union([Type.Literal('user'), Type.Literal('admin')]);
export type Role = Static<typeof Role>;
export const Email = Type.String({ format: 'email', maxLength: 254 });
/** A password as a body carries it; its strength is checked by auth/passwords.ts (`checkPassword`). */
export const Password = Type.String({ minLength: 1, maxLength: 1024 });
export const MaxChats = Type.Integer({ minimum: 0, maximum: 100_000 });
/** A daily AI limit of one user (messages or tokens); null follows the service's default. */
export const DailyLimit = Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()]);
/**
 * The user's own storage limit for documents, memory and reports, in MB of 1,000,000 bytes; null follows
 * SERVICE_USER_STORAGE_MB.
 */
export const StorageLimit = Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.Null()], {
  description:
    "The user's own storage limit for documents, memory entries and reports, in MB (1,000,000 bytes); null " +
    'follows SERVICE_USER_STORAGE_MB',
});

/** The account as every route answers it (never its password hash or token version). */
export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  is_active: Type.Boolean(),
  /**
   * False for a user restored from a backup without their password: nobody can log in as them until an
   * administrator sets one.
   */
  password_set: Type.Boolean({
    description: 'False for a user restored from a backup without a password (inactive until one is set)',
  }),
  locale: Type.String(),
  max_chats: Type.Integer(),
  max_ai_messages_per_day: Type.Union([Type.Integer(), Type.Null()]),
  max_ai_tokens_per_day: Type.Union([Type.Integer(), Type.Null()]),
  max_storage_mb: Type.Union([Type.Integer(), Type.Null()], {
    description: "The user's own storage limit in MB; null follows SERVICE_USER_STORAGE_MB",
  }),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type PublicUser = Static<typeof UserView>;

/** A `users` row as the database returns it. */
export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  role: Role;
  is_active: unknown;
  locale: Static<typeof Locale>;
  max_chats: number;
  max_ai_messages_per_day: number | null;
  max_ai_tokens_per_day: number | null;
  created_at: string;
  updated_at: string;
  /** The user's own storage limit in MB (assistant/storage.ts); null follows SERVICE_USER_STORAGE_MB. */
  max_storage_mb?: number | string | null;
  /** Written into each token issued; raised to revoke them all (auth/revocation.ts). */
  token_version: number;
}

/** True when the stored hash is a bcrypt hash (a user restored without one holds a marker that never matches). */
export const hasPassword = (hash: string | null | undefined): boolean => /^\$2[aby]\$/.test(hash ?? '');

export function publicUser(u: UserRow): PublicUser {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    is_active: Db.bool(u.is_active),
    password_set: hasPassword(u.password_hash),
    locale: u.locale,
    max_chats: u.max_chats,
    max_ai_messages_per_day: u.max_ai_messages_per_day,
    max_ai_tokens_per_day: u.max_ai_tokens_per_day,
    max_storage_mb: u.max_storage_mb == null ? null : Number(u.max_storage_mb),
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

/** The limits an administrator sets on a user, in the create and change bodies alike. */
const ADMIN_SETTABLE = {
  role: Role,
  max_chats: MaxChats,
  is_active: Type.Boolean(),
  max_ai_messages_per_day: DailyLimit,
  max_ai_tokens_per_day: DailyLimit,
  max_storage_mb: StorageLimit,
};

/** A bcrypt hash, as a backup carries a password (a user restored without one holds a marker instead). */
export const PasswordHash = Type.String({ pattern: '^\\$2[aby]\\$\\d{2}\\$[./A-Za-z0-9]{53}$' });

/**
 * The account as a backup record carries it, besides its id, password hash and times: its email,
 * language and what an administrator sets, except the storage limit, which backups do not carry (a
 * restore leaves a matched user's as it is; a new user follows SERVICE_USER_STORAGE_MB).
 */
const { max_storage_mb: _storageNotCarried, ...CARRIED } = ADMIN_SETTABLE;
export const USER_BACKUP_FIELDS = { email: Email, locale: Locale, ...CARRIED };
export type UserBackupFields = { [K in keyof typeof USER_BACKUP_FIELDS]: Static<(typeof USER_BACKUP_FIELDS)[K]> };

/** A `users` row's fields a backup carries, read back. */
export function userBackupFieldsOf(u: UserRow): UserBackupFields {
  const limit = (v: number | string | null) => (v == null ? null : Number(v));
  return {
    email: u.email,
    locale: u.locale,
    role: u.role,
    max_chats: Number(u.max_chats),
    is_active: Db.bool(u.is_active),
    max_ai_messages_per_day: limit(u.max_ai_messages_per_day),
    max_ai_tokens_per_day: limit(u.max_ai_tokens_per_day),
  };
}

/** `POST /api/v1/admin/users`. */
export const UserCreateBody = Type.Object(
  { email: Email, password: Password, locale: Type.Optional(Locale), ...optional(ADMIN_SETTABLE) },
  { additionalProperties: false },
);
/** `PATCH /api/v1/admin/users/{user_id}`: a new password (e.g. for a user restored without one), any limit. */
export const UserPatchBody = Type.Object(
  { password: Type.Optional(Password), ...optional(ADMIN_SETTABLE) },
  { additionalProperties: false },
);
export const UserParams = Type.Object({ user_id: Uuid });

/** A login's answer (also setup's and a password change's): the token, its lifetime and the account. */
export const Session = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Seconds the token stays valid' }),
  user: UserView,
});
export type Session = Static<typeof Session>;

/** `GET /api/setup`. */
export const SetupState = Type.Object({
  needs_setup: Type.Boolean({ description: 'True while the service has no user: the first becomes its administrator' }),
});

/** `POST /api/v1/auth/register`: the same answer whether or not the address had an account. */
export const Registered = Type.Object({ email: Type.String(), detail: Type.String() });

/** `GET /api/v1/admin/users`. */
export const UserList = Type.Object({ users: Type.Array(UserView) });
