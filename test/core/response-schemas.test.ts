/**
 * Every JSON success answer of the accounts, sign-in, health, settings, backup and assistant
 * routes (chats and messages aside) declares the schema it is serialized by, so the OpenAPI
 * document says what each returns and the web client's types (users/api-types.ts,
 * assistant/api-types.ts) describe what is sent.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';

interface Answer {
  description?: string;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}
type Doc = { paths: Record<string, Record<string, { responses?: Record<string, Answer> }>> };

/** The routes this covers: not chats and their messages, but the quota and a tool call's decision. */
const covered = (path: string) =>
  /^\/api\/(health|ready|setup|auth\/|backup\/)/.test(path) ||
  (/^\/api\/v1\//.test(path) && (!/^\/api\/v1\/chats(\/|$)/.test(path) || /\/(quota|tool-calls\/\{id\})$/.test(path)));

t.test('each JSON success answer of these routes names its schema', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const doc = (await s.request('GET', '/api/docs/json')).body as Doc;
  const missing: string[] = [];
  const seen: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!covered(path)) continue;
    for (const [method, op] of Object.entries(methods)) {
      for (const [status, a] of Object.entries(op.responses ?? {})) {
        if (!/^2\d\d$/.test(status) || status === '204') continue;
        const media = Object.keys(a.content ?? {});
        // A file (a PDF, a backup, metrics) is described by its media type.
        if (media.length && !media.includes('application/json')) continue;
        seen.push(`${method.toUpperCase()} ${path}`);
        const schema = a.content?.['application/json']?.schema;
        if (!schema || !('type' in schema || 'properties' in schema || '$ref' in schema))
          missing.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
  }
  for (const op of [
    'GET /api/health',
    'GET /api/ready',
    'GET /api/setup',
    'POST /api/auth/login',
    'GET /api/v1/users/me',
    'GET /api/v1/admin/users',
    'PATCH /api/v1/admin/settings',
    'GET /api/v1/skills',
    'PATCH /api/v1/memory/{id}',
    'GET /api/v1/documents/{id}',
    'GET /api/v1/reports',
    'GET /api/backup/pending-restore',
    'POST /api/v1/chats/{chat_id}/tool-calls/{id}',
  ])
    t.ok(seen.includes(op), `${op} is among them`);
  t.same(missing, [], 'none answers JSON without a schema');
});

t.test('what the schemas let through is what the routes answered before: every field of an account', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const me = await s.request('GET', '/api/v1/users/me', { token: s.admin.token });
  t.equal(me.status, 200);
  t.same(Object.keys(me.body).sort(), [
    'created_at',
    'email',
    'id',
    'is_active',
    'locale',
    'max_ai_messages_per_day',
    'max_ai_tokens_per_day',
    'max_chats',
    'max_storage_mb',
    'password_set',
    'role',
    'updated_at',
  ]);
  t.equal(me.body.max_storage_mb, null, 'a null limit stays null');
  t.equal(me.body.is_active, true);
  const ready = await s.request('GET', '/api/ready');
  t.same(Object.keys(ready.body).sort(), ['checks', 'errors', 'ready', 'replica', 'version']);
  t.equal(ready.body.checks.db, 'ok', 'the open record of checks keeps each check');
});
