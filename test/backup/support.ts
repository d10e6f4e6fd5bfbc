/**
 * Shared pieces of the backup tests: a configured service (providers with secrets, trackers,
 * targets, links, a bot and chat, actions, a template, self-monitoring, skills and contexts) and
 * a multipart upload helper, and services that boot again on their data (a staged restore is
 * applied at boot).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { tableExists } from '../../core/src/backup/export.ts';
import { newId, randomToken } from '../../core/src/http/ids.ts';
import { startService, type TestService } from '../helpers/service.ts';

export const SECRETS = {
  shared: 'example-shared-secret-1',
  api: 'recorder-api-token-XYZ',
  bot: '123456:bot-token-for-tests',
};

export interface Configured {
  user: { token: string; id: string; email: string };
  provider: any;
  tracker: any;
  target: any;
  botId: string;
  chatId: string;
  skillId?: string;
  digestAction: any;
  messageAction: any;
}

async function ok<T = any>(p: Promise<{ status: number; body: T; text: string }>, what: string): Promise<T> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

/** Configures a second user with one of everything, and the admin's self-monitoring and settings. */
export async function configure(s: TestService): Promise<Configured> {
  const a = s.admin.token;
  const user = await s.user();
  const u = user.token;
  const provider = await ok(
    s.request('POST', '/api/providers', {
      token: u,
      body: { kind: 'example', name: 'Example source', config: { shared_token: SECRETS.shared, label: 'north' } },
    }),
    'provider',
  );
  const tracker = await ok(
    s.request('POST', '/api/trackers', {
      token: u,
      body: {
        provider_id: provider.id,
        name: 'Things',
        event_types: { stale_thing: false },
        quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
        quiet_policies: { alarm: 'send' },
        quiet_release: 'digest',
        config: { tag: 'garden' },
      },
    }),
    'tracker',
  );
  const target = await ok(
    s.request('POST', '/api/targets', {
      token: u,
      body: {
        kind: 'recorder',
        name: 'Recorder',
        config: { url: 'http://127.0.0.1:9/hook', api_token: SECRETS.api },
        locale: 'ru',
      },
    }),
    'target',
  );
  await ok(s.request('PUT', `/api/trackers/${tracker.id}/targets/${target.id}`, { token: u }), 'link');
  const digestAction = await ok(
    s.request('POST', '/api/actions', {
      token: u,
      body: {
        name: 'Morning digest',
        kind: 'digest',
        schedule: '0 8 * * *',
        timezone: 'Europe/Berlin',
        config: { tracker_id: tracker.id },
      },
    }),
    'digest action',
  );
  const messageAction = await ok(
    s.request('POST', '/api/actions', {
      token: u,
      body: {
        name: 'Weekly hello',
        kind: 'message',
        schedule: '0 9 * * 1',
        config: { target_ids: [target.id], title: 'Hello', body: 'Still here' },
        enabled: false,
      },
    }),
    'message action',
  );
  await ok(
    s.request('PATCH', '/api/self-monitoring', {
      token: a,
      body: { poll_failure_threshold: 7, track_deferred_backlog: false },
    }),
    'self-monitoring',
  );
  const db = s.service.core.db;
  const now = new Date().toISOString();
  // No bot driver is enabled in the test service, so the bot and its chat are written directly (the token sealed, as
  // the service stores it).
  const botId = newId();
  await db.run(
    'INSERT INTO bots (id, user_id, kind, name, token, bot_id, username, mode, webhook_path_id, status, ' +
      `created_at, updated_at) VALUES (?, ?, 'telegram', 'Herald bot', ?, '987654', 'herald_test_bot', 'polling', ` +
      `?, 'ok', ?, ?)`,
    [botId, user.id, s.service.core.atRest.seal(SECRETS.bot), randomToken(), now, now],
  );
  const chatId = newId();
  await db.run(
    'INSERT INTO bot_chats (id, bot_id, user_id, chat_id, type, title, username, is_forum, registered, ' +
      `last_seen_at, created_at) VALUES (?, ?, ?, '-100123', 'supergroup', 'Family', NULL, ?, ?, ?, ?)`,
    [chatId, botId, user.id, true, true, now, now],
  );
  await db.run(
    'INSERT INTO templates (id, user_id, event_type, locale, title, body, created_at, updated_at) VALUES (?, ?, ' +
      `'thing_happened', 'en', 'T: {{name}}', 'Body {{name}}', ?, ?)`,
    [newId(), user.id, now, now],
  );
  await db.run(
    `INSERT INTO settings (key, value, updated_at) VALUES ('default_max_chats', '33', ?), ` +
      `('backup_retention_count', '5', ?)`,
    [now, now],
  );
  let skillId: string | undefined;
  if (await tableExists(db, 'skills')) {
    skillId = newId();
    await db.run(
      'INSERT INTO skills (id, owner_id, scope, name, description, prompt, created_at, updated_at) VALUES (?, ' +
        `NULL, 'general', 'Summarise', 'Short summaries', 'Summarise briefly.', ?, ?)`,
      [skillId, now, now],
    );
    await db.run(
      'INSERT INTO skills (id, owner_id, scope, name, description, prompt, created_at, updated_at) VALUES (?, ?, ' +
        `'personal', 'Mine', NULL, 'Be kind.', ?, ?)`,
      [newId(), user.id, now, now],
    );
    await db.run(
      `INSERT INTO primary_context (id, content, version, updated_by, updated_at) VALUES (1, 'We run a small ` +
        `farm.', 3, ?, ?)`,
      [s.admin.id, now],
    );
    await db.run(
      `INSERT INTO personal_contexts (user_id, content, updated_at) VALUES (?, 'I like short answers.', ?)`,
      [user.id, now],
    );
  }
  return { user, provider, tracker, target, botId, chatId, skillId, digestAction, messageAction };
}

/** POSTs `text` as the multipart `file` field of prepare-restore. */
export async function upload(
  url: string,
  token: string,
  text: string | Buffer,
  query = 'conflict_mode=overwrite',
  field = 'file',
): Promise<{ status: number; body: any; text: string }> {
  const form = new FormData();
  form.append(field, new Blob([typeof text === 'string' ? text : new Uint8Array(text)]), 'backup.json');
  const res = await fetch(`${url}/api/backup/prepare-restore${query ? `?${query}` : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = await res.text();
  let parsed: any = body;
  try {
    parsed = JSON.parse(body);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, text: body };
}

/** The configuration the service would back up now, with secrets. */
export async function exportNow(s: TestService, mode: 'include' | 'exclude' = 'include'): Promise<any> {
  const r = await s.request('GET', `/api/backup/export?secrets_mode=${mode}`, { token: s.admin.token });
  if (r.status !== 200) throw new Error(`export: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * `boot`: a service on a data directory of its own (removed after the test), or booted again on
 * `dataDir` without setup; `reboot`: stops a service and boots it again on its data, keeping its
 * administrator. Every boot gets `env` (the same SERVICE_SECRET_KEY, so sealed secrets stay readable)
 * plus `extra`.
 */
export function servicesWith(env: Record<string, string>) {
  const boot = async (t: Test, dataDir?: string, extra: Record<string, string> = {}): Promise<TestService> => {
    const dir = dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'herald-backup-'));
    if (!dataDir) t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    return startService({ ...env, ...extra }, { dataDir: dir, setup: !dataDir });
  };
  const reboot = async (t: Test, s: TestService, extra: Record<string, string> = {}): Promise<TestService> => {
    await s.stop();
    const next = await boot(t, s.dataDir, extra);
    next.admin = s.admin;
    return next;
  };
  return { boot, reboot };
}
