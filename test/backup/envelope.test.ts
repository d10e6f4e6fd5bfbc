import crypto from 'node:crypto';
import t from 'tap';
import {
  buildEnvelope,
  canonicalJson,
  checksumOf,
  parseVersion,
  readEnvelope,
} from '../../core/src/backup/envelope.ts';
import { type ConfigurationT, FORMAT, FORMAT_VERSION } from '../../core/src/backup/schema.ts';
import { HttpError } from '../../core/src/http/problem.ts';

const emptyConfig = (): ConfigurationT => ({
  users: [
    {
      id: '01900000-0000-7000-8000-000000000001',
      email: 'a@example.test',
      role: 'admin',
      is_active: true,
      locale: 'en',
      max_chats: 20,
      max_ai_messages_per_day: null,
      max_ai_tokens_per_day: null,
      created_at: '2024-01-01T00:00:00.000Z',
      updated_at: '2024-01-01T00:00:00.000Z',
    },
  ],
  providers: [],
  trackers: [],
  targets: [],
  tracker_targets: [],
  bots: [],
  bot_chats: [],
  actions: [],
  templates: [],
  skills: [],
  primary_context: null,
  personal_contexts: [],
  settings: { backup_retention_count: '7' },
});

const build = (c = emptyConfig(), version = '0.1.0') =>
  buildEnvelope(c, {
    serviceVersion: version,
    createdAt: new Date('2024-05-01T10:00:00.000Z'),
    secretsMode: 'exclude',
    trigger: 'manual',
  });

const refusal = (text: string, version = '0.1.0'): { status: number; code: string; detail: string } | undefined => {
  try {
    readEnvelope(text, version);
    return undefined;
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, code: err.code, detail: err.message };
    throw err;
  }
};

t.test('canonical JSON sorts keys at every level and ignores key order and whitespace', async (t) => {
  t.equal(
    canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }),
    '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
  );
  t.equal(checksumOf({ a: 1, b: [1, 2] }), checksumOf(JSON.parse('{ "b": [1, 2], "a": 1 }')));
  t.not(checksumOf({ a: 1, b: [1, 2] }), checksumOf({ a: 1, b: [2, 1] }), 'array order matters');
  const hex = crypto.createHash('sha256').update('{"a":1}').digest('hex');
  t.equal(checksumOf({ a: 1 }), `sha256:${hex}`, 'sha256 of the canonical text');
});

t.test('an envelope carries format, versions, time, secrets mode and checksum, and reads back', async (t) => {
  const e = build();
  t.equal(e.format, FORMAT);
  t.equal(e.format_version, FORMAT_VERSION);
  t.equal(e.service_version, '0.1.0');
  t.equal(e.created_at, '2024-05-01T10:00:00.000Z');
  t.equal(e.secrets_mode, 'exclude');
  t.equal(e.checksum, checksumOf(e.configuration));
  t.same(
    Object.keys(e).slice(0, 5),
    ['format', 'format_version', 'service_version', 'created_at', 'trigger'],
    'the header comes first',
  );
  const back = readEnvelope(JSON.stringify(e, null, 2), '0.1.0');
  t.same(back.envelope, e);
  t.equal(back.migratedFrom, undefined);
});

t.test('a wrong checksum is refused, whether the configuration or the checksum was edited', async (t) => {
  const e = build();
  const edited = { ...e, configuration: { ...e.configuration, settings: { backup_retention_count: '8' } } };
  t.match(refusal(JSON.stringify(edited)), { status: 422, code: 'checksum_mismatch' });
  t.match(refusal(JSON.stringify({ ...e, checksum: `sha256:${'0'.repeat(64)}` })), {
    status: 422,
    code: 'checksum_mismatch',
  });
  t.match(refusal(JSON.stringify({ ...e, checksum: undefined })), { status: 422, code: 'checksum_mismatch' });
});

t.test('unknown format versions and foreign files are refused with a reason', async (t) => {
  const e = build();
  for (const v of [0, 2, 99, '1', 1.5, null]) {
    const r = refusal(JSON.stringify({ ...e, format_version: v }));
    t.match(r, { status: 422, code: 'unknown_format_version' }, `format_version ${JSON.stringify(v)}`);
    t.match(r?.detail, /format version/);
  }
  t.match(refusal(JSON.stringify({ ...e, format: 'something-else' })), {
    status: 422,
    code: 'invalid_backup',
    detail: /not a Herald configuration backup/,
  });
  t.match(refusal('[1,2,3]'), { status: 422, code: 'invalid_backup' });
});

t.test('service versions: older ones are accepted and reported as migrated, newer ones refused', async (t) => {
  const older = build(emptyConfig(), '0.0.9');
  const r = readEnvelope(JSON.stringify(older), '0.1.0');
  t.same(r.migratedFrom, { service_version: '0.0.9', format_version: 1 });
  const newer = build(emptyConfig(), '0.2.0');
  t.match(refusal(JSON.stringify(newer), '0.1.0'), {
    status: 422,
    code: 'newer_service_version',
    detail: /Herald 0\.2\.0.*newer.*upgrade Herald/,
  });
  t.match(refusal(JSON.stringify(build(emptyConfig(), 'banana')), '0.1.0'), {
    status: 422,
    code: 'invalid_backup',
    detail: /not a version number/,
  });
  t.same(parseVersion('1.2.3-rc.1'), [1, 2, 3]);
});

t.test('limits and forbidden keys are refused before parsing', async (t) => {
  const e = build();
  const deep = JSON.stringify({ ...e, configuration: { ...e.configuration, settings: { a: [[[[[[[[[[1]]]]]]]]]] } } });
  t.match(refusal(deep), { status: 422, code: 'json_limits_exceeded', detail: /deeper than 10/ });
  const text = JSON.stringify(e).replace('"settings":{', '"settings":{"__proto__":{"polluted":true},');
  t.match(refusal(text), { status: 422, code: 'forbidden_key', detail: /__proto__/ });
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing was polluted');
  t.match(refusal(JSON.stringify(e).slice(0, 200)), { status: 422, code: 'invalid_json', detail: /ends early/ });
});

t.test('the shape is checked: unknown fields, bad values and oversize strings are refused', async (t) => {
  const c = emptyConfig();
  (c.users[0] as Record<string, unknown>).is_admin = true;
  t.match(refusal(JSON.stringify(build(c))), {
    status: 422,
    code: 'invalid_backup',
    detail: /do not belong: is_admin/,
  });
  const c2 = emptyConfig();
  c2.users[0]!.role = 'root' as 'admin';
  t.match(refusal(JSON.stringify(build(c2))), { status: 422, code: 'invalid_backup' });
  const c3 = emptyConfig();
  c3.skills.push({
    id: '01900000-0000-7000-8000-000000000009',
    owner_id: null,
    scope: 'general',
    name: 'x'.repeat(201),
    description: null,
    prompt: 'p',
    created_at: '2024-01-01T00:00:00.000Z',
    updated_at: '2024-01-01T00:00:00.000Z',
  });
  t.match(refusal(JSON.stringify(build(c3))), { status: 422, code: 'invalid_backup', detail: /skills\/0\/name/ });
});
