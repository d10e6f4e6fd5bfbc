/**
 * What to paste into the sending app, in a real Chromium against the real service: a new ntfy
 * provider's card shows the topic URL, server and topic (secrets masked until shown), each with a
 * copy button that puts the real value on the clipboard, and its curl example, in English and
 * then in Russian; the generic webhook's curl example (built by the client from its mapping and
 * auth mode) records an event when run as shown; the email provider says the SMTP listener is off.
 * The template editor lists {{markdown field}}. The target form's "Paste an Apprise URL" fills
 * kind, name and config from an ntfys:// URL and saving creates that target; a scheme Herald has
 * no target for is refused in the interface language.
 */
import { execFile } from 'node:child_process';
import t from 'tap';
import { eventRows, plugins } from '../e2e/support.ts';
import { peerEnv } from '../helpers/peers.ts';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const MASK = '••••••••';
const SECRET = 'a-webhook-secret-of-24ch';
const svc = await startService({
  SERVICE_PLUGINS: plugins(
    '@herald/provider-ntfy',
    '@herald/provider-webhook',
    '@herald/provider-email-in',
    '@herald/target-ntfy',
    '@herald/provider-gotify',
  ),
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_SUPERVISED: 'false',
});
const b = await openBrowser(undefined, { shots: 'connection-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
});

const token = svc.admin.token;
const providers = async () => (await svc.request('GET', '/api/providers', { token })).body.providers as any[];
const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
/** Runs a command line as the page shows it, in bash, with SECRET set. */
const shell = (line: string) =>
  new Promise<{ code: number; out: string }>((resolve) => {
    execFile('/bin/bash', ['-c', line], { env: peerEnv({ SECRET }), timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, out: `${stdout}${stderr}` });
    });
  });

t.test('what to paste, and the Apprise URL field', async (t) => {
  await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  const card = (name: string) => page.locator('.item-card', { hasText: name });
  const row = (name: string, key: string) => card(name).getByTestId(`connection-${key}`);
  let ntfy: any;

  await step('create-ntfy', async () => {
    await page.goto(`${svc.url}/#/providers`);
    await page.getByRole('button', { name: 'Add provider' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('provider-kind').selectOption('ntfy');
    await dialog.getByTestId('provider-name').fill('Phone alerts');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    ntfy = (await providers()).find((p) => p.kind === 'ntfy');
    const topic = ntfy.webhook_connection[1].value as string;
    await card('Phone alerts').getByText('Paste these into the app or device that sends the notifications.').waitFor();
    t.equal(await row('Phone alerts', 'server_url').locator('.field-label').textContent(), 'ntfy server URL');
    t.equal(
      await row('Phone alerts', 'server_url').getByTestId('copy-value').inputValue(),
      svc.url,
      'the server, in full',
    );
    t.equal(await row('Phone alerts', 'topic').locator('.field-label').textContent(), 'Topic');
    t.equal(await row('Phone alerts', 'topic').getByTestId('copy-value').inputValue(), MASK, 'the topic hidden');
    t.equal(
      await row('Phone alerts', 'webhook_url').getByTestId('copy-value').inputValue(),
      `${svc.url}/${MASK}`,
      'and hidden in the topic URL',
    );
    const example = card('Phone alerts').getByTestId('connection-example');
    t.ok(await example.getByText('Send a test with curl').isVisible(), 'the example, unfolded on the new card');
    t.equal(await example.getByTestId('copy-code').textContent(), `curl -d 'Backup done' ${svc.url}/${MASK}`);

    await row('Phone alerts', 'topic').getByRole('button', { name: 'Copy: Topic' }).click();
    await until(async () => (await clipboard()) === topic, 'the real topic on the clipboard');
    await example.getByRole('button', { name: 'Copy: Send a test with curl' }).click();
    await until(async () => (await clipboard()) === ntfy.webhook_example, 'the real command on the clipboard');
    t.equal(ntfy.webhook_example, `curl -d 'Backup done' ${svc.url}/${topic}`);

    await card('Phone alerts').getByRole('button', { name: 'Show secrets' }).click();
    t.equal(await row('Phone alerts', 'topic').getByTestId('copy-value').inputValue(), topic, 'shown when asked');
    t.equal(await example.getByTestId('copy-code').textContent(), ntfy.webhook_example);
    t.equal(
      await card('Phone alerts').getByRole('button', { name: 'Hide secrets' }).getAttribute('aria-pressed'),
      'true',
    );
    await b.shot('connection-ntfy');
  });

  await step('ntfy-in-russian', async () => {
    await page.getByTestId('language').selectOption('ru');
    // The service labels the values in the account's language: the list follows it.
    await until(
      async () =>
        (await row('Phone alerts', 'server_url').locator('.field-label').textContent()) === 'Адрес сервера ntfy',
      'the labels in Russian',
    );
    t.equal(await row('Phone alerts', 'topic').locator('.field-label').textContent(), 'Тема');
    t.equal(await row('Phone alerts', 'webhook_url').locator('.field-label').textContent(), 'Адрес вебхука');
    await card('Phone alerts').getByRole('button', { name: 'Скрыть секреты' }).click();
    t.equal(await row('Phone alerts', 'topic').getByTestId('copy-value').inputValue(), MASK, 'hidden again');
    const example = card('Phone alerts').getByTestId('connection-example');
    await example.locator('summary').getByText('Проверка через curl').click();
    t.equal(await example.getByTestId('copy-code').textContent(), `curl -d 'Backup done' ${svc.url}/${MASK}`);
    await row('Phone alerts', 'server_url').getByRole('button', { name: 'Копировать: Адрес сервера ntfy' }).click();
    await until(async () => (await clipboard()) === svc.url, 'the server on the clipboard');
    await page.getByText('Скопировано в буфер обмена.').first().waitFor();
    t.ok(await card('Phone alerts').getByRole('button', { name: 'Показать секреты' }).isVisible());
    await b.shot('connection-ntfy-ru');
  });

  await step('generic-webhook-example-runs', async () => {
    for (const auth of ['bearer', 'hmac_sha256'] as const) {
      const name = `Backups ${auth}`;
      const r = await svc.request('POST', '/api/providers', {
        token,
        body: {
          kind: 'webhook',
          name,
          auth_mode: auth,
          config: { secret: SECRET, mapping: { title: 'job.title || name', body: '{{job.text}}' } },
        },
      });
      t.equal(r.status, 201, r.text);
      await page.reload();
      const example = card(name).getByTestId('connection-example');
      await example.locator('summary').click();
      const line = (await example.getByTestId('copy-code').textContent())!;
      t.match(
        line,
        '{"job":{"title":"Резервная копия готова","text":"Все файлы скопированы."}}',
        `${auth}: the mapping's paths, sample text in the interface language`,
      );
      t.ok(await example.getByText('Сначала задайте SECRET').isVisible(), 'says to set SECRET');
      const run = await shell(line);
      t.equal(run.code, 0, `${auth}: ${run.out}`);
      const events = await until(async () => {
        const e = await eventRows(svc, r.body.id);
        return e.length ? e : null;
      }, `${auth}: the event`);
      t.match(
        events![0]!.payload,
        { title: 'Резервная копия готова', body: 'Все файлы скопированы.' },
        `${auth}: the mapping reads title and body`,
      );
    }
  });

  await step('email-listener-off', async () => {
    const r = await svc.request('POST', '/api/providers', {
      token,
      body: { kind: 'email_in', name: 'NAS mail', config: {} },
    });
    t.equal(r.status, 201, r.text);
    await page.reload();
    await card('NAS mail').getByText('SMTP-приёмник сервиса выключен', { exact: false }).waitFor();
    t.match(await card('NAS mail').textContent(), /SERVICE_SMTP_PORT/, 'names the setting');
    t.equal(
      await card('NAS mail').getByRole('button', { name: 'Показать секреты' }).count(),
      0,
      'nothing secret listed',
    );
  });

  await step('template-syntax', async () => {
    await page.getByTestId('language').selectOption('en');
    await page.goto(`${svc.url}/#/templates?kind=gotify&type=gotify_message&lang=en`);
    await page.getByTestId('edit-template').click();
    const help = page.locator('dialog[open]').getByTestId('template-help');
    await help.waitFor();
    t.match(await help.textContent(), '{{markdown field}}', 'the syntax lists {{markdown field}}');
    t.match(await help.textContent(), /message/, 'the field it passes through is listed');
    await page.locator('dialog[open]').getByRole('button', { name: 'Cancel' }).click();
  });

  await step('apprise-url-fills-the-form', async () => {
    await page.goto(`${svc.url}/#/targets`);
    await page.getByRole('button', { name: 'Add target' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('apprise-url').fill('ntfys://ntfy.example.org/backups');
    await dialog.getByTestId('apprise-fill').click();
    await dialog.getByText('Filled in from the Apprise URL: check the fields and save.').waitFor();
    t.equal(await dialog.getByTestId('target-kind').inputValue(), 'ntfy');
    t.equal(await dialog.getByTestId('target-name').inputValue(), 'ntfy backups');
    t.equal(await dialog.getByTestId('cfg-server_url').inputValue(), 'https://ntfy.example.org');
    t.equal(await dialog.getByTestId('cfg-topic').inputValue(), 'backups');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const targets = (await svc.request('GET', '/api/targets', { token })).body.targets as any[];
    t.match(
      targets,
      [{ kind: 'ntfy', name: 'ntfy backups', config: { server_url: 'https://ntfy.example.org' } }],
      'the target exists',
    );
    t.same(targets[0].secrets_set, ['topic'], 'with its topic');
  });

  await step('apprise-url-unsupported', async () => {
    b.allow(/status of 422.*\/api\/targets\/parse-url/); // the refusals provoked on purpose
    await page.getByRole('button', { name: 'Add target' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('apprise-url').fill('pushbullet://o.abcdef');
    await dialog.getByTestId('apprise-fill').click();
    await dialog.getByRole('alert').getByText("Herald has no target for Apprise's pushbullet:// URLs.").waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByTestId('language').selectOption('ru');
    await page.getByRole('button', { name: 'Добавить получателя' }).click();
    await dialog.getByTestId('apprise-url').fill('pushbullet://o.abcdef');
    await dialog.getByTestId('apprise-fill').click();
    await dialog
      .getByRole('alert')
      .getByText('В Herald нет получателя для адресов Apprise вида pushbullet://.')
      .waitFor();
    t.equal((await svc.request('GET', '/api/targets', { token })).body.targets.length, 1, 'nothing more was created');
    await b.shot('apprise-unsupported-ru');
  });

  t.same(b.problems, [], 'no console errors');
});
