/** Shared set-up for the assistant tests: a service wired to the fake model, users, and an SSE client. */
import type { Worker } from 'node:worker_threads';
import { createParser } from 'eventsource-parser';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai.ts';
import { startService, type TestService } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

export interface Harness {
  svc: TestService;
  ai: FakeOpenAI;
}

type Tap = { teardown(fn: () => unknown): void };

/**
 * With HERALD_TEST_PG_URL (a PostgreSQL URL whose user may create databases), each harness runs on
 * a fresh PostgreSQL database instead of SQLite, dropped afterwards.
 */
async function freshPostgres(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const base = process.env.HERALD_TEST_PG_URL;
  if (!base) return { env: {}, async drop() {} };
  const { default: pg } = await import('pg');
  const name = `herald_assistant_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    env: { SERVICE_DATABASE_URL: url.toString() },
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A service whose model is the fake; torn down with the test. `env` overrides the defaults. */
export async function harness(t: Tap, env: Record<string, string> = {}): Promise<Harness> {
  const ai = await startFakeOpenAI({ apiKey: 'test-key' });
  const db = await freshPostgres();
  const svc = await startService({
    SERVICE_PLUGINS: '@herald/provider-bridge-self',
    AI_BASE_URL: ai.baseUrl,
    AI_API_KEY: 'test-key',
    SERVICE_LOG_LEVEL: 'WARNING',
    ...db.env,
    ...env,
  });
  t.teardown(async () => {
    await svc.stop();
    await ai.close();
    await db.drop();
  });
  return { svc, ai };
}

/** A new ordinary user created through the admin API, logged in. */
export async function newUser(
  svc: TestService,
  extra: Record<string, unknown> = {},
): Promise<{ token: string; id: string; email: string }> {
  const email = `u${Math.random().toString(36).slice(2, 10)}@example.test`;
  const created = await svc.request('POST', '/api/v1/admin/users', {
    token: svc.admin.token,
    body: { email, password: 'user password 1', ...extra },
  });
  if (created.status !== 201) throw new Error(`user creation failed: ${created.status} ${created.text}`);
  const login = await svc.request('POST', '/api/auth/login', { body: { email, password: 'user password 1' } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  return { token: login.body.access_token, id: created.body.id, email };
}

export async function newChat(
  svc: TestService,
  token: string,
  body: Record<string, unknown> = { title: 'Chat' },
): Promise<string> {
  const r = await svc.request('POST', '/api/v1/chats/', { token, body });
  if (r.status !== 201) throw new Error(`chat creation failed: ${r.status} ${r.text}`);
  return r.body.id;
}

export interface StreamEvent {
  event: string;
  data: any;
}
export interface StreamResult {
  /** 0 when the client gave up before the response headers. */
  status: number;
  headers: Headers;
  events: StreamEvent[];
  comments: string[];
  /** The parsed body when the answer was not a stream (problem details). */
  problem?: any;
  /** Set when the connection ended before the stream did. */
  terminated?: Error;
}

/**
 * Posts a message and reads the answer: an SSE stream parsed with eventsource-parser, or a
 * problem body. `abortWhen` disconnects as soon as it returns true for the events so far; `abortAfterMs` after that
 * long, `abortOn` once that promise resolves.
 */
export async function send(
  svc: TestService,
  token: string,
  chatId: string,
  content: string,
  o: { abortWhen?: (events: StreamEvent[]) => boolean; abortAfterMs?: number; abortOn?: Promise<unknown> } = {},
): Promise<StreamResult> {
  const controller = new AbortController();
  const timer = o.abortAfterMs !== undefined ? setTimeout(() => controller.abort(), o.abortAfterMs) : undefined;
  void o.abortOn?.then(() => controller.abort());
  let res: globalThis.Response;
  try {
    res = await fetch(`${svc.url}/api/v1/chats/${chatId}/messages`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
  } catch (err) {
    if (controller.signal.aborted) return { status: 0, headers: new Headers(), events: [], comments: [] };
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const out: StreamResult = { status: res.status, headers: res.headers, events: [], comments: [] };
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await res.text();
    try {
      out.problem = JSON.parse(text);
    } catch {
      out.problem = text;
    }
    return out;
  }
  const parser = createParser({
    onEvent: (e) => {
      out.events.push({ event: e.event ?? 'message', data: JSON.parse(e.data) });
    },
    onComment: (c) => {
      out.comments.push(c.trim());
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (o.abortWhen?.(out.events)) {
        controller.abort();
        break;
      }
    }
  } catch (err) {
    // The server closing the connection mid-stream is an outcome some tests look for.
    if (!controller.signal.aborted) out.terminated = err as Error;
  }
  return out;
}

export const named = (r: StreamResult, name: string) => r.events.filter((e) => e.event === name);
export const text = (r: StreamResult) =>
  named(r, 'delta')
    .map((e) => e.data.content)
    .join('');

/**
 * Resolves once the service has started a worker thread with `heapMb` as its heap limit (a PDF being read, a report
 * being drawn: each job has a thread of its own) and that thread runs; fails after `ms` naming `what`. Call it before
 * the request that starts the job.
 */
export function workerRunning(what: string, heapMb: number, ms = 15_000): Promise<void> {
  let running = false;
  const seen = (w: Worker) => {
    if (w.resourceLimits?.maxOldGenerationSizeMb !== heapMb) return;
    process.off('worker', seen);
    w.once('online', () => {
      running = true;
    });
  };
  process.on('worker', seen);
  return waitFor(what, () => running, ms).then(
    () => undefined,
    (err) => {
      process.off('worker', seen);
      throw err;
    },
  );
}

/** Logs the administrator in again (after the test clock moved, older tokens may have expired). */
export async function adminToken(svc: import('../helpers/service.ts').TestService): Promise<string> {
  const r = await svc.request('POST', '/api/auth/login', {
    body: { email: svc.admin.email, password: 'correct horse battery' },
  });
  if (r.status !== 200) throw new Error(`admin login failed: ${r.status} ${r.text}`);
  svc.admin.token = r.body.access_token;
  return svc.admin.token;
}

/** Uploads a document as multipart/form-data under the field name `file` (or `field`). */
export async function upload(
  svc: import('../helpers/service.ts').TestService,
  token: string,
  filename: string,
  data: string | Buffer,
  type = 'text/plain',
  field = 'file',
) {
  const form = new FormData();
  form.append(field, new Blob([typeof data === 'string' ? data : new Uint8Array(data)], { type }), filename);
  const res = await fetch(`${svc.url}/api/v1/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

/** The text of a PDF, read back with poppler's pdftotext. */
export async function pdfText(pdf: Buffer): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-pdf-'));
  try {
    const file = path.join(dir, 'r.pdf');
    fs.writeFileSync(file, pdf);
    return execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Downloads a report with the user's token. */
export async function download(svc: import('../helpers/service.ts').TestService, token: string, id: string) {
  const res = await fetch(`${svc.url}/api/v1/reports/${id}/download`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}
