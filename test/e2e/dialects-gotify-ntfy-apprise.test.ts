/**
 * Herald as a drop-in Gotify, ntfy and Apprise API server: Debian's real `apprise` posts with
 * `gotify://`, `ntfy://` and `apprise://` URLs, `curl` publishes to ntfy the way ntfy's
 * documentation shows, and each message reaches a target with its title, body and severity. The
 * answers are the services' own (Gotify's message object, ntfy's message object); refusals come in
 * their error shapes (a missing or foreign token, an oversized body refused before it is read,
 * malformed JSON, a form Gotify would not read, a flood from one address), and no token ever
 * appears in the service's log.
 */

import { execFile } from 'node:child_process';
import http from 'node:http';
import t, { type Test } from 'tap';
import { ensureBinary, peerEnv } from '../helpers/peers.ts';
import { startService, startSink, type TestService } from '../helpers/service.ts';
import { chain, create, event, payloadLog, plugins, recorder, relayOf } from './support.ts';

/** Runs a peer program; resolves with its exit code and output (never rejects). */
function run(bin: string, args: string[]): Promise<{ code: number; stdout: string; output: string }> {
  return new Promise((resolve) => {
    execFile(
      ensureBinary(bin),
      args,
      { env: peerEnv({ HOME: '/nonexistent' }), timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout: String(stdout),
          output: `${stdout}${stderr}`,
        });
      },
    );
  });
}
const apprise = (args: string[]) => run('/usr/bin/apprise', ['-vv', ...args]);
const curl = (args: string[]) => run('/usr/bin/curl', ['-sS', ...args]);

/**
 * A request whose Content-Length says `declared` bytes but which sends only a first chunk: the answer must come before
 * the rest.
 */
function declaredOnly(
  url: string,
  declared: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { 'content-length': String(declared), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        });
      },
    );
    req.on('error', (err) => {
      if (!(err as NodeJS.ErrnoException).code?.startsWith('ECONNRESET')) reject(err);
    });
    req.write(Buffer.alloc(1024, 0x61));
  });
}

/** A body sent chunked, without a Content-Length: measured once read. */
function chunked(url: string, size: number): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'text/plain' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
      );
    });
    req.on('error', reject);
    for (let sent = 0; sent < size; sent += 8192) req.write(Buffer.alloc(Math.min(8192, size - sent), 0x62));
    req.end();
  });
}

/** The token of a provider, from the values the providers API lists for its app. */
const valueOf = (provider: any, key: string): string =>
  provider.webhook_connection.find((f: any) => f.key === key).value;

async function boot(t: Test) {
  const s = await startService({
    SERVICE_PLUGINS: plugins('@herald/provider-gotify', '@herald/provider-ntfy', '@herald/provider-apprise-api'),
  });
  const sink = await startSink();
  t.teardown(async () => {
    await s.stop();
    await sink.close();
  });
  const target = await recorder(s, sink.url);
  const gotify = (await chain(s, { provider: { kind: 'gotify', name: 'Gotify apps', config: {} }, target })).provider;
  const ntfy = (await chain(s, { provider: { kind: 'ntfy', name: 'ntfy topic', config: {} }, target })).provider;
  const appriseApi = (await chain(s, { provider: { kind: 'apprise_api', name: 'Apprise key', config: {} }, target }))
    .provider;
  const tokens = {
    gotify: valueOf(gotify, 'app_token'),
    ntfy: valueOf(ntfy, 'topic'),
    apprise: new URL(valueOf(appriseApi, 'notify_url')).pathname.split('/').pop()!,
  };
  return { s, sink, target, gotify, ntfy, appriseApi, tokens, host: new URL(s.url).host };
}

/** The first event a provider's payload log records as accepted. */
async function accepted(s: TestService, providerId: string): Promise<any[]> {
  const log = await payloadLog(s, providerId);
  return Promise.all(
    log
      .filter((e) => e.status_code === 202)
      .reverse()
      .map((e) => event(s, e.event_ids[0])),
  );
}

t.test(
  "real clients: apprise (gotify://, ntfy://, apprise://) and curl reach the target; answers in each service's shape",
  async (t) => {
    const { s, sink, gotify, ntfy, appriseApi, tokens, host } = await boot(t);

    t.match(
      gotify.webhook_url,
      new RegExp(`^${s.url}/api/compat/gotify/message\\?token=`),
      'the Gotify URL to paste carries the app token',
    );
    t.same(
      gotify.webhook_connection.map((f: any) => [f.key, f.label, f.value === tokens.gotify || f.value]),
      [
        ['server_url', 'Gotify server URL', `${s.url}/api/compat/gotify`],
        ['app_token', 'Application token', true],
      ],
    );
    t.equal(ntfy.webhook_url, `${s.url}/${tokens.ntfy}`, 'ntfy: the topic URL');
    t.equal(tokens.ntfy.length, 43);
    t.equal(
      appriseApi.webhook_url,
      `apprise://${host}/api/compat/apprise/${tokens.apprise}`,
      'Apprise API: the apprise:// URL',
    );
    t.equal(tokens.apprise.length, 32, 'an Apprise API key of 32 characters, the most Apprise accepts');
    t.equal(
      (await s.request('PATCH', '/api/v1/users/me', { token: s.admin.token, body: { locale: 'ru' } })).status,
      200,
    );
    const ru = await s.request('GET', `/api/providers/${ntfy.id}`, { token: s.admin.token });
    t.equal(ru.body.webhook_connection[1].label, 'Тема', "labels in the caller's language");
    t.equal(
      (await s.request('PATCH', '/api/v1/users/me', { token: s.admin.token, body: { locale: 'en' } })).status,
      200,
    );

    const g = await apprise([
      '-t',
      'Backup finished',
      '-b',
      '**nas**: 3 GB in 4 min',
      '-i',
      'markdown',
      `gotify://${host}/api/compat/gotify/${tokens.gotify}?priority=high&format=markdown`,
    ]);
    t.equal(g.code, 0, `apprise gotify:// succeeded\n${g.output}`);
    const n = await apprise([
      '-t',
      'Disk almost full',
      '-b',
      '/srv at 93%',
      `ntfy://${host}/${tokens.ntfy}?priority=high&tags=warning,nas`,
    ]);
    t.equal(n.code, 0, `apprise ntfy:// succeeded\n${n.output}`);
    const a = await apprise([
      '-n',
      'failure',
      '-t',
      'Backup failed',
      '-b',
      'disk *full*',
      `apprise://${host}/api/compat/apprise/${tokens.apprise}?format=markdown`,
    ]);
    t.equal(a.code, 0, `apprise apprise:// succeeded\n${a.output}`);

    const c1 = await curl([
      '-d',
      'Backup done',
      '-H',
      'Title: nas «ok»',
      '-H',
      'Priority: urgent',
      '-H',
      'Tags: warning,skull,backup',
      `${s.url}/${tokens.ntfy}`,
    ]);
    t.equal(c1.code, 0, c1.output);
    const answer = JSON.parse(c1.stdout);
    t.match(
      answer,
      {
        event: 'message',
        topic: tokens.ntfy,
        title: 'nas «ok»',
        message: 'Backup done',
        priority: 5,
        tags: ['warning', 'skull', 'backup'],
      },
      "ntfy's message object",
    );
    t.match(answer.id, /^[A-Za-z0-9]{12}$/);
    t.type(answer.time, 'number');
    const c2 = await curl([
      s.url,
      '-d',
      JSON.stringify({
        topic: tokens.ntfy,
        message: 'Restore finished',
        title: 'nas',
        priority: 2,
        tags: ['white_check_mark'],
      }),
    ]);
    t.equal(c2.code, 0, c2.output);
    t.match(
      JSON.parse(c2.stdout),
      { event: 'message', topic: tokens.ntfy, message: 'Restore finished', priority: 2 },
      'the JSON publish at the root',
    );
    const direct = await s.request('POST', `/api/compat/gotify/message?token=${tokens.gotify}`, {
      body: { message: 'plain', priority: 4 },
    });
    t.equal(direct.status, 200);
    t.type(direct.body.id, 'number', "Gotify's message id is a number");
    t.match(direct.body, { message: 'plain', priority: 4, title: '' });
    t.type(direct.body.appid, 'number');

    const [gotifyEvents, ntfyEvents, appriseEvents] = await Promise.all([
      accepted(s, gotify.id),
      accepted(s, ntfy.id),
      accepted(s, appriseApi.id),
    ]);
    t.match(gotifyEvents[0], {
      event_type: 'gotify_message',
      severity: 'critical',
      payload: {
        title: 'Backup finished',
        message: '**nas**: 3 GB in 4 min',
        priority: 8,
        markdown: true,
        source_ip: '127.0.0.1',
      },
    });
    t.match(gotifyEvents[1], { severity: 'warning', payload: { message: 'plain', priority: 4, markdown: false } });
    t.match(
      ntfyEvents.map((e) => [e.severity, e.payload.title, e.payload.message, e.payload.emojis, e.payload.tags]),
      [
        ['warning', 'Disk almost full', '/srv at 93%', '⚠️', ['nas']],
        ['critical', 'nas «ok»', 'Backup done', '⚠️ 💀', ['backup']],
        ['info', 'nas', 'Restore finished', '✅', []],
      ],
      "apprise's JSON (with X-Priority and X-Tags) and both curl forms",
    );
    for (const e of ntfyEvents)
      t.notOk(JSON.stringify(e.payload).includes(tokens.ntfy), 'the topic is not stored in the event');
    t.match(appriseEvents[0], {
      event_type: 'apprise_notification',
      severity: 'critical',
      payload: { title: 'Backup failed', body: 'disk *full*', type: 'failure', format: 'markdown', markdown: true },
    });

    await relayOf(s).tick();
    const got = await sink.waitFor(6);
    t.equal(
      got.length,
      6,
      `all six messages arrived: ${JSON.stringify(got.map((r) => [r.body.plainTitle, r.body.severity]))}`,
    );
    const byTitle = (title: string) => got.find((r) => r.body.plainTitle === title)?.body;
    t.match(
      byTitle('Backup finished'),
      { severity: 'critical', plainBody: '**nas**: 3 GB in 4 min\n\nSource: 127.0.0.1' },
      'gotify: title, Markdown body, severity, source address',
    );
    t.match(
      byTitle('Gotify apps'),
      { severity: 'warning', plainBody: /^plain\n\nSource: 127\.0\.0\.1$/ },
      "a blank Gotify title shows the provider's name",
    );
    t.match(
      byTitle('⚠️ 💀 nas «ok»'),
      { severity: 'critical', plainBody: 'Backup done\n\nTags: backup\n\nSource: 127.0.0.1' },
      'ntfy: emoji before the title, other tags in the body',
    );
    t.match(byTitle('✅ nas'), { severity: 'info', plainBody: /^Restore finished\n\nSource: 127\.0\.0\.1$/ });
    t.match(byTitle('⚠️ Disk almost full'), {
      severity: 'warning',
      plainBody: /^\/srv at 93%\n\nTags: nas\n\nSource: 127\.0\.0\.1$/,
    });
    t.match(
      byTitle('Backup failed'),
      { severity: 'critical', plainBody: 'disk *full*\n\nSource: 127.0.0.1' },
      'apprise: title, body, severity',
    );
    const excerpts = (await payloadLog(s, ntfy.id)).map((e) => e.payload_excerpt ?? '').join('\n');
    t.match(excerpts, /Restore finished/, 'the JSON publish is in the payload log');
    t.notOk(excerpts.includes(tokens.ntfy), 'with its topic masked');
    t.notOk(
      s.logText().includes(tokens.gotify) || s.logText().includes(tokens.ntfy) || s.logText().includes(tokens.apprise),
      "no token in the service's log",
    );

    const docs = await s.request('GET', '/api/docs/json');
    t.equal(docs.status, 200, 'the OpenAPI document builds');
    for (const [path, method] of [
      ['/api/compat/gotify/message', 'post'],
      ['/{topic}', 'put'],
      ['/{topic}', 'post'],
      ['/', 'post'],
      ['/', 'put'],
      ['/api/compat/apprise/notify/{token}', 'post'],
    ]) {
      t.ok(docs.body.paths[path]?.[method]?.summary, `documented: ${method.toUpperCase()} ${path}`);
    }
    t.equal((await s.request('GET', '/')).status, 200, 'the web client keeps GET /');
  },
);

t.test(
  'refusals: tokens missing, unknown or of another kind; bodies too large, malformed or of a type the service ' +
    'refuses; a flood; nothing logs a token',
  async (t) => {
    const { s, gotify, ntfy, tokens } = await boot(t);
    const GOTIFY_401 = {
      error: 'Unauthorized',
      errorCode: 401,
      errorDescription: 'you need to provide a valid access token or user credentials to access this api',
    };
    const NTFY_404 = { code: 40401, http: 404, error: 'page not found' };
    const json = { 'content-type': 'application/json' };

    t.match(
      await s.request('POST', '/api/compat/gotify/message', { body: { message: 'x' } }),
      { status: 401, body: GOTIFY_401 },
      'Gotify without a token',
    );
    t.match(
      await s.request('POST', '/api/compat/gotify/message', {
        body: { message: 'x' },
        headers: { 'x-gotify-key': 'Awrongtoken0123' },
      }),
      { status: 401, body: GOTIFY_401 },
      'an unknown token',
    );
    t.match(
      await s.request('POST', '/api/compat/gotify/message', {
        body: { message: 'x' },
        headers: { 'x-gotify-key': tokens.ntfy },
      }),
      { status: 401, body: GOTIFY_401 },
      'an ntfy token on the Gotify route',
    );
    t.match(
      await s.request('POST', `/${'Z'.repeat(43)}`, { raw: 'x' }),
      { status: 404, body: NTFY_404 },
      'an unknown ntfy topic',
    );
    t.match(
      await s.request('PUT', `/${tokens.gotify}`, { raw: 'x' }),
      { status: 404, body: NTFY_404 },
      'a Gotify token as an ntfy topic',
    );
    t.match(
      await s.request('POST', '/', { raw: JSON.stringify({ topic: tokens.gotify, message: 'x' }) }),
      { status: 404, body: NTFY_404 },
      'a Gotify token in an ntfy JSON publish',
    );
    t.match(
      await s.request('POST', `/api/compat/apprise/notify/${tokens.ntfy}`, { body: { body: 'x' } }),
      { status: 404, body: { error: 'No webhook is registered at this address.' } },
      'an ntfy token on the Apprise route',
    );
    t.equal((await s.request('POST', '/short', { raw: 'x' })).status, 404, 'a short path is no topic');

    t.match(
      await s.request('POST', '/api/compat/gotify/message', {
        headers: { 'x-gotify-key': tokens.gotify },
        body: { title: 'no message' },
      }),
      { status: 400, body: { error: 'Bad Request', errorCode: 400, errorDescription: "Field 'message' is required" } },
      'Gotify requires a message',
    );
    t.match(
      await s.request('POST', '/api/compat/gotify/message', {
        headers: { 'x-gotify-key': tokens.gotify, ...json },
        raw: '{"message": "x"',
      }),
      { status: 400, body: { errorCode: 400 } },
      'malformed JSON to Gotify',
    );
    t.match(
      await s.request('POST', '/api/compat/gotify/message', {
        headers: { 'x-gotify-key': tokens.gotify, 'content-type': 'text/plain' },
        raw: 'message=hello',
      }),
      { status: 400, body: { errorCode: 400 } },
      'a text/plain body Gotify does not read as a form',
    );
    t.match(
      await s.request('POST', '/', { headers: json, raw: '{"topic": ' }),
      { status: 400, body: { code: 40017, http: 400 } },
      'malformed JSON to ntfy',
    );
    t.match(
      await s.request('POST', `/api/compat/apprise/notify/${tokens.apprise}`, { headers: json, raw: '{"body":' }),
      { status: 400, body: { error: 'Invalid JSON Payload provided' } },
      'malformed JSON to the Apprise API',
    );
    t.match(
      await s.request('POST', `/${tokens.ntfy}`, { headers: { priority: 'loud' }, raw: 'x' }),
      { status: 400, body: { code: 40007 } },
      'an invalid ntfy priority',
    );

    const big = await declaredOnly(`${s.url}/${tokens.ntfy}`, 10 * 1024 * 1024);
    t.match(
      big,
      { status: 413, body: { code: 41301, http: 413 } },
      'a declared 10 MiB body is refused before it is sent',
    );
    t.match(
      await declaredOnly(s.url, 10 * 1024 * 1024, json),
      { status: 413, body: { code: 41301 } },
      'also on the root, before the topic is known',
    );
    t.match(
      await declaredOnly(`${s.url}/api/compat/gotify/message?token=${tokens.gotify}`, 300 * 1024, json),
      { status: 413, body: { errorCode: 413 } },
      'Gotify over 256 KiB',
    );
    t.match(
      await chunked(`${s.url}/${tokens.ntfy}`, 70 * 1024),
      { status: 413, body: { code: 41301 } },
      'a chunked body over 64 KiB is measured',
    );
    t.equal(
      (await s.request('PUT', `/${tokens.ntfy}`, { raw: 'a'.repeat(64 * 1024) })).status,
      200,
      'exactly 64 KiB is accepted',
    );
    const ntfyLog = await payloadLog(s, ntfy.id);
    t.ok(
      ntfyLog.filter((e) => e.status_code === 413).length >= 2,
      'the refusals of a known topic are in its payload log',
    );

    const flooder = await create(s, '/api/providers', { kind: 'gotify', name: 'Flooded', config: {} });
    const floodToken = valueOf(flooder, 'app_token');
    const post = (ip: string) =>
      s.request('POST', '/api/compat/gotify/message', {
        headers: { 'x-gotify-key': floodToken, 'x-forwarded-for': ip },
        body: { message: 'flood' },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await post('198.51.100.77')).status);
    t.same([...new Set(statuses)], [200], '120 requests a minute from one address are accepted');
    const limited = await post('198.51.100.77');
    t.equal(limited.status, 429, 'the 121st is refused');
    t.same(
      limited.body,
      { error: 'Too Many Requests', errorCode: 429, errorDescription: limited.body.errorDescription },
      "in Gotify's shape",
    );
    t.match(limited.body.errorDescription, /120 requests a minute/);
    t.ok(Number(limited.headers.get('retry-after')) >= 1, 'with Retry-After');
    t.equal((await post('198.51.100.78')).status, 200, 'another address is not held back');

    const off = await s.request('PATCH', `/api/providers/${gotify.id}`, {
      token: s.admin.token,
      body: { enabled: false },
    });
    t.equal(off.status, 200);
    t.match(
      await s.request('POST', '/api/compat/gotify/message', {
        headers: { 'x-gotify-key': tokens.gotify },
        body: { message: 'x' },
      }),
      { status: 409, body: { errorCode: 409, error: 'Conflict' } },
      'a disabled provider',
    );

    // A GET of a topic is the web client's (or nothing), never a publish; its URL is masked in the log too.
    await s.request('GET', `/${tokens.ntfy}`);
    const text = s.logText();
    for (const [kind, token] of Object.entries({ ...tokens, flood: floodToken }))
      t.notOk(text.includes(token), `the ${kind} token is not in the service's log`);
    t.match(text, /\/\[REDACTED\]/, 'the topic path is logged masked');
  },
);
