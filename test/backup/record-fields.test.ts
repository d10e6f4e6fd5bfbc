/**
 * The records of format version 1 derive from the resources' definitions (users/definition.ts, the
 * relay's and the assistant's definitions): a field added to a definition reaches the backup record
 * without an edit of schema.ts. Backups written before it lack it, so it must arrive optional (the
 * definition's `addedLater` list): no record may require a field beyond those listed here, and none
 * may drop one (an older backup carrying it would be refused as an unknown field).
 */
import t from 'tap';
import * as schema from '../../core/src/backup/schema.ts';

/** Per record: the fields every v1 backup has, and those a v1 backup may have. */
/** What the test reads of a record's schema (a TypeBox object schema is JSON Schema). */
type ObjectSchema = { properties: Record<string, unknown>; required?: string[] };

const V1: Record<string, { required: string[]; optional: string[] }> = {
  UserRecord: {
    required: [
      'id',
      'email',
      'role',
      'is_active',
      'locale',
      'max_chats',
      'max_ai_messages_per_day',
      'max_ai_tokens_per_day',
      'created_at',
      'updated_at',
    ],
    optional: ['password_hash', 'secrets_omitted'],
  },
  BotRecord: {
    required: ['id', 'user_id', 'kind', 'name', 'bot_id', 'username', 'mode', 'created_at', 'updated_at'],
    optional: ['token', 'webhook_path_id', 'secrets_omitted'],
  },
  ChatRecord: {
    required: [
      'id',
      'bot_id',
      'user_id',
      'chat_id',
      'type',
      'title',
      'username',
      'is_forum',
      'registered',
      'last_seen_at',
      'created_at',
    ],
    optional: [],
  },
  SkillRecord: {
    required: ['id', 'owner_id', 'scope', 'name', 'description', 'prompt', 'created_at', 'updated_at'],
    optional: [],
  },
  ProviderRecord: {
    required: [
      'id',
      'user_id',
      'kind',
      'name',
      'config',
      'enabled',
      'poll_failure_threshold',
      'deferred_backlog_threshold',
      'target_failure_threshold',
      'track_poll_failures',
      'track_deferred_backlog',
      'track_target_failures',
      'created_at',
      'updated_at',
    ],
    optional: ['webhook_token', 'outbound_allow', 'secrets_omitted'],
  },
  TrackerRecord: {
    required: [
      'id',
      'user_id',
      'provider_id',
      'name',
      'enabled',
      'event_types',
      'quiet_hours',
      'quiet_policies',
      'config',
      'created_at',
      'updated_at',
    ],
    optional: ['description', 'quiet_release', 'secrets_omitted'],
  },
  TargetRecord: {
    required: ['id', 'user_id', 'kind', 'name', 'config', 'locale', 'enabled', 'created_at', 'updated_at'],
    optional: ['update_messages', 'outbound_allow', 'secrets_omitted'],
  },
  ActionRecord: {
    required: [
      'id',
      'user_id',
      'name',
      'kind',
      'schedule',
      'timezone',
      'config',
      'enabled',
      'created_at',
      'updated_at',
    ],
    optional: [],
  },
  TemplateRecord: {
    required: ['id', 'user_id', 'event_type', 'locale', 'title', 'body', 'created_at', 'updated_at'],
    optional: [],
  },
};

for (const [name, v1] of Object.entries(V1)) {
  t.test(name, async (t) => {
    const record = (schema as unknown as Record<string, ObjectSchema>)[name];
    const required = new Set(record.required ?? []);
    const known = new Set(Object.keys(record.properties));
    t.same(
      [...required].filter((k) => !v1.required.includes(k)),
      [],
      'no field beyond those of every v1 backup is required (a new one is added optional)',
    );
    t.same(
      [...v1.required, ...v1.optional].filter((k) => !known.has(k)),
      [],
      'every field a v1 backup may carry is still known',
    );
  });
}
