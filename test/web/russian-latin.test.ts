/**
 * Russian mode without English: every page of the web client, in Russian, with realistic data (a
 * webhook source, a tracker with quiet hours, a target that works and one that fails, events that
 * were sent, deferred, dropped and failed, a rejected webhook call), must show no Latin-script word
 * outside the allow list below: proper names of services and technical tokens, each with its reason.
 * Codes (event types, plugin ids, English error texts from remote services) may show only where an
 * operator asks for them: tooltips (`title`), and the raw JSON of the details view, which is folded
 * away until opened. User data (names the demo typed in English, e-mail addresses, URLs) does not
 * count. Event details, the webhook log, the template editor, dialogs and a test event's toast are
 * opened on the way.
 */
import t from 'tap';
import { waitFor } from '../helpers/wait.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';
import { concrete, eachDialog, login, routePaths, startDemo, visit } from './pages.ts';

/**
 * Latin words allowed in Russian text, each a proper name or a technical token a Russian
 * operator reads as is. Matched case-sensitively, as whole words.
 */
const ALLOW: Record<string, string> = {
  Herald: 'the product name',
  URL: 'technical term used as is in Russian IT',
  JSON: 'data format name',
  YAML: 'data format name',
  API: 'technical term used as is',
  HTTP: 'protocol name',
  HTTPS: 'protocol name',
  SMTP: 'protocol name',
  IMAP: 'protocol name',
  MQTT: 'protocol name',
  TLS: 'protocol name',
  SSL: 'protocol name',
  UTC: 'time standard',
  GMT: 'time standard (Intl writes offsets as GMT+3)',
  cron: 'the scheduler syntax the field takes',
  IANA: 'the time-zone database name',
  PDF: 'file format name',
  CSV: 'file format name',
  HTML: 'format name',
  Markdown: 'format name',
  HMAC: 'algorithm name',
  'HMAC-SHA256': 'algorithm name',
  SHA256: 'algorithm name',
  Bearer: 'HTTP authorization scheme name',
  Authorization: 'HTTP header name to configure in the sending app',
  ID: 'identifier abbreviation used as is',
  id: 'identifier abbreviation used as is',
  Webhook: 'technical term in app settings (vendor apps label it so)',
  OpenAI: 'service/protocol name',
  AI: 'abbreviation used as is',
  CPU: 'hardware term',
  Slack: 'service name',
  Discord: 'service name',
  Mattermost: 'service name',
  'Rocket.Chat': 'service name',
  Rocket: 'service name (Rocket.Chat)',
  Chat: 'service name part (Google Chat, Rocket.Chat)',
  Google: 'service name',
  Teams: 'service name (Microsoft Teams)',
  Microsoft: 'service name',
  Telegram: 'service name',
  Matrix: 'service name',
  Signal: 'service name',
  Pushover: 'service name',
  Gotify: 'service name',
  ntfy: 'service name',
  Apprise: 'service name',
  Zulip: 'service name',
  Home: 'service name (Home Assistant)',
  Assistant: 'service name (Home Assistant)',
  Immich: 'service name',
  Planka: 'service name',
  Uptime: 'service name (Uptime Kuma)',
  Kuma: 'service name (Uptime Kuma)',
  Grafana: 'service name',
  Alertmanager: 'service name',
  Prometheus: 'service name',
  GitHub: 'service name',
  GitLab: 'service name',
  Gitea: 'service name',
  Forgejo: 'service name',
  NUT: 'Network UPS Tools, the service name',
  upsd: 'the NUT daemon name',
  Web: 'Web Push, the standard name',
  Push: 'Web Push, the standard name',
  VAPID: 'the Web Push key standard name',
  Postgres: 'database name',
  PostgreSQL: 'database name',
  SQLite: 'database name',
  S3: 'storage protocol name',
  Bot: 'Telegram Bot API name',
  BotFather: 'Telegram bot name',
  CI: 'abbreviation used as is',
  TOTP: 'standard name',
  UPS: 'hardware term (ИБП is used where it reads better)',
  curl: 'command name',
  WebSocket: 'protocol name',
  QoS: 'MQTT term (quality of service level), written so in every MQTT client',
  Basic: 'HTTP authorization scheme name',
  Network: 'service name (Network UPS Tools)',
  Tools: 'service name (Network UPS Tools)',
  Workflows: "Microsoft's product name (Teams Workflows)",
  Apps: "a menu item in Gotify's English-only interface (Apps → Create application)",
  Create: "a button in Gotify's and Pushover's English-only interfaces",
  application: "a button in Gotify's English-only interface (Create application)",
  Application: "a link on Pushover's English-only site (Create an Application/API Token)",
  an: "part of that link's text on Pushover's site",
  Token: "part of that link's text on Pushover's site",
  Header: "a field of Grafana's contact point, English in Grafana's settings",
  header: "a field of Grafana's contact point (Timestamp header)",
  Timestamp: "a field of Grafana's contact point (Timestamp header)",
  Signature: "a section of Grafana's contact point (HMAC Signature)",
  Secret: "a field of Grafana's contact point (Secret)",
  Credentials: "a field of Grafana's contact point (Credentials)",
  Authentication: "a section of Grafana's contact point (HTTP Basic Authentication)",
  Enter: 'key name',
  Shift: 'key name',
  Ctrl: 'key name',
  Esc: 'key name',
};

const LATIN_WORD = /[A-Za-z][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*/g;
/**
 * Technical tokens by their shape, read as they are: variable and setting names with an underscore
 * or a digit (last_error, SERVICE_USER_STORAGE_MB, gpt-4o-mini), HTTP header names (X-Signature-256),
 * acronyms in capitals (PEM, NAS, REST), program and model names in lower case with hyphens
 * (signal-cli, gpt-4o-mini), and single letters (examples such as «a, b», an initial).
 * Codes the service stores (event types, plugin ids, severities, statuses) never pass by shape.
 */
const TECHNICAL =
  /^(?:[A-Za-z][\w.-]*(?:_|\d)[\w.-]*|X-[\w-]+|[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)*|[a-z0-9]+(?:-[a-z0-9]+)+|[A-Za-z])$/;
/**
 * User data and tokens that are not words: URLs, e-mail addresses, paths, {{placeholders}}, dotted or snake_case code
 * in the user's own fields.
 */
const NOT_WORDS = [
  /https?:\/\/\S+/g,
  /[\w.+-]+@[\w.-]+\.\w+/g,
  /\{\{[^}]*\}\}/g,
  // A value to type in as it is, quoted as code in a text not rendered as Markdown.
  /`[^`]*`/g,
  // File and host names (ups.conf, nas.lan) and permission names (album.read).
  /\b[a-z0-9]+(?:\.[a-z0-9]+)+\b/g,
  // File extensions (.txt), URL schemes and addresses of another service (tgram://…), MIME types (application/json).
  /(?:^|[\s(])\.[a-z0-9]+\b/g,
  /\b[a-z]+:\/\/\S*/g,
  /\b[a-z]+\/[a-z0-9.+-]+\b/g,
  // Placeholders for a value (<secret>, <hex>) and JSON examples ({"title": …}).
  /<[^<>]*>/g,
  /\{[^{}]*"[^{}]*\}/g,
  /(?:^|[\s(])\/[\w/.:<>-]+/g,
  /\b[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12}\b/g,
];

ensureBuilt();
const demo = await startDemo('ru');
const { svc, token } = demo;
const call = async (method: string, p: string, body?: unknown) => {
  const r = await svc.request(method, p, { token, body });
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
  return r.body;
};

// A target that fails for good (the address refuses with 400), a tracker with quiet hours now.
const { startSink } = await import('../helpers/service.ts');
const bad = await startSink();
bad.respond(400);
const failing = await call('POST', '/api/targets', {
  kind: 'chat_webhook',
  name: 'Ops room',
  locale: 'ru',
  config: { format: 'slack', url: `${bad.url}slack` },
});
const providers = (await call('GET', '/api/providers')).providers as {
  id: string;
  name: string;
  webhook_url: string;
}[];
const source = providers.find((p) => p.name === 'Build server')!;
const trackers = (await call('GET', '/api/trackers')).trackers as { id: string; name: string }[];
const nightly = trackers.find((x) => x.name === 'Nightly builds')!;
await call('PUT', `/api/trackers/${nightly.id}/targets/${failing.id}`);
// A target nobody answers at (connection refused): its delivery retries and the target shows its last error.
const dead = await call('POST', '/api/targets', {
  kind: 'chat_webhook',
  name: 'Dead room',
  locale: 'ru',
  config: { format: 'slack', url: 'http://127.0.0.1:1/slack' },
});
await call('PUT', `/api/trackers/${nightly.id}/targets/${dead.id}`);
const hook = new URL(source.webhook_url).pathname;
const send = async (title: string, severity?: string) => {
  const r = await svc.request('POST', hook, {
    headers: { authorization: 'Bearer 0123456789abcdef' },
    body: { title, body: 'Release notes', ...(severity ? { severity } : {}) },
  });
  if (r.status !== 202) throw new Error(`webhook: ${r.status} ${r.text}`);
};
await send('Deploy finished');
// A call without its token: the webhook log shows the rejection.
await svc.request('POST', hook, { body: { title: 'Deploy finished' } });
// A second source with a tracker in quiet hours and no enabled target (a deferred event, a dropped one).
const quiet = await call('POST', '/api/providers', {
  kind: 'webhook',
  name: 'Backup job',
  config: { mapping: { title: 'title', body: 'body' }, secret: 'fedcba9876543210' },
  auth_mode: 'bearer',
});
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const quietTracker = await call('POST', '/api/trackers', {
  provider_id: quiet.id,
  name: 'Backup tracker',
  quiet_hours: { start: hhmm(Date.now() - 3600_000), end: hhmm(Date.now() + 3600_000), timezone: 'Europe/Kyiv' },
});
await call('PUT', `/api/trackers/${quietTracker.id}/targets/${failing.id}`);
const quietHook = new URL(quiet.webhook_url).pathname;
await svc.request('POST', quietHook, {
  headers: { authorization: 'Bearer fedcba9876543210' },
  body: { title: 'Backup done', body: 'Backup notes' },
});
// A source whose tracker links no target: the event is dropped with a reason.
const lone = await call('POST', '/api/providers', {
  kind: 'webhook',
  name: 'Lone hook',
  config: { mapping: { title: 'title', body: 'body' }, secret: 'abcdefabcdef0123' },
  auth_mode: 'bearer',
});
await call('POST', '/api/trackers', { provider_id: lone.id, name: 'Lone tracker' });
await svc.request('POST', new URL(lone.webhook_url).pathname, {
  headers: { authorization: 'Bearer abcdefabcdef0123' },
  body: { title: 'Nobody listens', body: 'Lone notes' },
});
// A scheduled message, run once now: an event with no source of the user's (its source is the action).
const targets = (await call('GET', '/api/targets')).targets as { id: string; name: string }[];
const action = await call('POST', '/api/actions', {
  name: 'Morning note',
  kind: 'message',
  schedule: '0 9 * * 1-5',
  timezone: 'Europe/Kyiv',
  config: { target_ids: [targets.find((x) => x.name === 'Team chat')!.id], title: 'Morning note', body: 'Coffee' },
});
await call('POST', `/api/actions/${action.id}/run`);
// Until every delivery has been tried once and its outcome recorded (one failing for good, one queued for a retry
// it does not reach here, one sent), not a fixed 1.5 s: under load some were still queued or sending after it, and
// the pages below would show no error for them.
await waitFor('every delivery to be tried once and recorded', async () => {
  const db = svc.service.core.db;
  const untried = await db.all(
    "SELECT id FROM deliveries WHERE status = 'sending' OR (status = 'queued' AND attempts = 0)",
  );
  const unrouted = await db.all(
    "SELECT id FROM event_log e WHERE dispatch_status = 'pending' AND NOT EXISTS " +
      '(SELECT 1 FROM deliveries d WHERE d.event_id = e.id)',
  );
  return untried.length === 0 && unrouted.length === 0;
});

/** Codes that must show as words: event types, plugin ids, severities, dispatch and delivery statuses. */
const CODES = new Set([
  ...demo.codes,
  'info',
  'warning',
  'critical',
  'pending',
  'dispatched',
  'deferred',
  'dropped',
  'failed',
  'partial',
  'sent',
  'queued',
]);

/** The codes no English word looks like (webhook_received, chat_webhook): what the English check looks for. */
const SNAKE_CODES = new Set(demo.codes.filter((c) => c.includes('_')));

const userData = [
  ...demo.data,
  'Ops room',
  'Backup job',
  'Backup tracker',
  'Backup done',
  'Backup notes',
  'Lone hook',
  'Lone tracker',
  'Nobody listens',
  'Lone notes',
  'Morning note',
  'Coffee',
  'Dead room',
].filter((d) => d.length > 3);

const b = await openBrowser({ width: 1366, height: 850 }, { shots: 'russian-latin' });
const { page } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await bad.close();
  await demo.close();
});

/**
 * The Latin words a person reads on the page or in `scope`: text, placeholders, labels, alt texts
 * and options (not tooltips, not folded details). Text set as code (`<code>`, `<kbd>`: a template
 * variable, a value to type) counts only when it is one of the stored codes above.
 */
async function latinWords(scope = 'body', onlyCodes = false): Promise<string[]> {
  const texts = await page.evaluate((scope) => {
    const root = document.querySelector(scope);
    if (!root) return [];
    const out: [string, boolean][] = [];
    const skip = (el: Element) =>
      el.closest('script, style, pre, textarea, .md, [data-walk-skip], details:not([open]) > :not(summary)');
    const shown = (el: Element) => (el as HTMLElement).checkVisibility?.({ checkVisibilityCSS: true }) ?? true;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || !n.textContent?.trim() || skip(el) || el.closest('option')) continue;
      if (scope === 'body' && el.closest('dialog[open]')) continue;
      // A value to type in as it is, quoted as code in a hint (`light`, `upsc -l`, now shown as code).
      if (el.closest('.inline-md code')) continue;
      if (shown(el)) out.push([n.textContent.trim(), Boolean(el.closest('code, kbd'))]);
    }
    for (const el of root.querySelectorAll('[placeholder], [aria-label], img[alt]')) {
      if ((scope === 'body' && el.closest('dialog[open]')) || !shown(el) || skip(el)) continue;
      for (const a of ['placeholder', 'aria-label', 'alt']) {
        const v = el.getAttribute(a);
        if (v?.trim()) out.push([v.trim(), false]);
      }
    }
    for (const el of root.querySelectorAll('input[type="text"], input:not([type])')) {
      if ((scope === 'body' && el.closest('dialog[open]')) || !shown(el) || skip(el)) continue;
      // A read-only field shows what the service wrote (not what the user typed).
      if ((el as HTMLInputElement).readOnly && (el as HTMLInputElement).value)
        out.push([(el as HTMLInputElement).value, false]);
    }
    for (const sel of root.querySelectorAll('select')) {
      if (sel.matches('[data-testid="language"]')) continue;
      if ((scope === 'body' && sel.closest('dialog[open]')) || !shown(sel)) continue;
      for (const o of sel.options) if (o.text.trim()) out.push([o.text.trim(), false]);
    }
    return out;
  }, scope);
  const words: string[] = [];
  for (let [s, code] of texts) {
    for (const re of NOT_WORDS) s = s.replace(re, ' ');
    for (const d of [...userData].sort((a, b) => b.length - a.length)) s = s.split(d).join(' ');
    for (const w of s.match(LATIN_WORD) ?? [])
      if (
        onlyCodes
          ? SNAKE_CODES.has(w)
          : (CODES.has(w) && !(w in ALLOW)) || (!code && !(w in ALLOW || TECHNICAL.test(w)))
      )
        words.push(`${w} (in ${JSON.stringify(s.trim().slice(0, 120))})`);
  }
  return words;
}

const found: string[] = [];
const check = async (where: string, scope?: string) => {
  for (const w of await latinWords(scope)) found.push(`${where}: ${w}`);
};

t.test('every page in Russian shows no Latin-script word outside the allow list', async (t) => {
  await login(page, svc.url);
  t.equal(await page.evaluate(() => document.documentElement.lang), 'ru');
  let pages = 0;
  for (const route of routePaths()) {
    const path = concrete(route, demo);
    if (!path) continue;
    await visit(page, path);
    await check(path);
    await eachDialog(page, async (name) => {
      // A row in each map editor (a severity map's choices), so its choices are read too.
      for (const add of await page.locator('dialog[open] button[data-testid$="-add"]').all())
        if (await add.isVisible()) await add.click();
      await check(`${path} ${name}`, 'dialog[open]');
    });
    pages++;
  }
  t.ok(pages > 15, `${pages} pages walked`);

  // The event log with every event's details open.
  await visit(page, '/events');
  for (const x of await page.locator('button.expander').all()) await x.click();
  // The details render as they arrive: wait for the two this page must show (a loaded machine took over 300 ms).
  const shown = (selector: string) =>
    page
      .locator(selector)
      .first()
      .waitFor()
      .then(
        () => true,
        () => false,
      );
  const failedShown = await shown('.ops-error[title]');
  const reasonShown = await shown('[data-testid="event-reason"]');
  await page.waitForTimeout(300);
  await check('/events (details open)');
  t.ok(failedShown, 'a failed delivery shows its error (the original in the tooltip)');
  t.ok(reasonShown, 'a dropped event shows why');
  t.ok(
    await page.locator('td.ops-provider', { hasText: 'Действие по расписанию' }).count(),
    "the scheduled message's source is named",
  );
  await visit(page, '/targets');
  t.ok(await page.locator('p.hint-danger[title]').count(), 'a target that cannot be reached shows its last error');
  await check('/targets (with a last error)');

  // The webhook log of each source, and a test event's toast.
  await visit(page, '/providers');
  for (const x of await page.getByRole('button', { name: 'Последние вызовы вебхука' }).all()) await x.click();
  // Until the logs have loaded (no spinner left, the rejected call shown), not a fixed 400 ms.
  await until(
    async () =>
      (await page.locator('.loading').count()) === 0 && (await page.locator('td.wrap[title*="bearer"]').count()) > 0,
    'the webhook logs to load, the rejected call among them',
    15_000,
  );
  await check('/providers (webhook log open)');
  t.ok(await page.locator('td.wrap[title*="bearer"]').count(), 'the webhook log shows the rejected call');
  const testButton = page.locator('[data-testid="test-event"]').first();
  await testButton.click();
  await page.locator('.toasts .toast').first().waitFor();
  await check('/providers (test event toast)', '.toasts');

  // The template editor of the first event type, in Russian.
  await visit(page, '/templates');
  const edit = page.locator('.tpl-row button').first();
  await edit.click();
  await page.locator('dialog[open]').waitFor();
  await check('/templates editor', 'dialog[open]');
  await page.keyboard.press('Escape');

  if (process.env.LATIN_DUMP) (await import('node:fs')).writeFileSync(process.env.LATIN_DUMP, found.join('\n'));
  t.same(found, [], 'no Latin word outside the allow list');
  t.same(b.problems, [], 'no console errors or missing strings');
});

t.test('in English too, event types and kinds show by name, not as codes', async (t) => {
  await page.locator('[data-testid="language"]').first().selectOption('en');
  await page.locator('html[lang="en"]').waitFor({ state: 'attached' });
  const codes: string[] = [];
  for (const path of ['/', '/events', '/deferred', '/trackers', '/targets', '/templates']) {
    await visit(page, path);
    if (path === '/events') {
      for (const x of await page.locator('button.expander').all()) await x.click();
      await page.waitForTimeout(300);
    }
    for (const w of await latinWords('body', true)) codes.push(`${path}: ${w}`);
  }
  t.same(codes, [], 'no event type or kind code on the relay pages in English');
  t.same(b.problems, [], 'no console errors or missing strings');
});
