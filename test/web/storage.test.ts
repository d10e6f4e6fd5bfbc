/**
 * The storage limit in real Chromium: the documents page shows used and limit (with what each kind
 * takes) in English and Russian, flags a full storage, and words the refusal of an upload past the
 * limit in the user's language; the administrator sets a user's own limit on the users page.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const svc = await startService({
  SERVICE_USER_STORAGE_MB: '1',
  SERVICE_LOG_LEVEL: 'WARNING',
  SERVICE_SUPERVISED: 'false',
});
const b = await openBrowser(undefined, { shots: 'storage-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
});

const remember = (content: string) =>
  svc.request('POST', '/api/v1/memory', { token: svc.admin.token, body: { content } });

t.test('storage on the documents page and the users page, in both languages', async (t) => {
  await step('login', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  });

  await step('used-of-limit-en', async () => {
    for (let i = 0; i < 8; i++) t.equal((await remember('m'.repeat(32_000))).status, 201);
    await page.goto(`${svc.url}/#/documents`);
    const meter = page.getByTestId('storage');
    await meter.getByText('256 kB of 1 MB').waitFor();
    t.match(
      (await meter.innerText()).replace(/\s+/g, ' '),
      /Storage 256 kB of 1 MB Documents 0 byte · memory 256 kB · reports 0 byte/,
      'used, limit and what takes it',
    );
    t.equal(await meter.getAttribute('data-exceeded'), 'false');
  });

  await step('full-ru', async () => {
    for (let i = 0; i < 23; i++) await remember('m'.repeat(32_000));
    t.equal((await remember('m'.repeat(8_000))).status, 201, 'exactly at the limit');
    await page.getByTestId('language').selectOption('ru');
    await page.locator('#page-title').filter({ hasText: 'Документы' }).waitFor();
    await page.reload();
    const meter = page.getByTestId('storage');
    await meter.and(page.locator('[data-exceeded="true"]')).waitFor();
    t.match((await meter.innerText()).replace(/\s+/g, ' '), /Хранилище 1 МБ из 1 МБ/, 'used and limit in Russian');
    t.equal(await meter.getAttribute('data-exceeded'), 'true', 'a full storage is flagged');
    t.match(
      await meter.innerText(),
      /Документы 0 Б · память 1 МБ · отчёты 0 Б[\s\S]*Заполнено: удалите что-нибудь/,
      'what takes it, in Russian',
    );
    b.allow(/status of 413/); // the refusal provoked on purpose
    await page
      .locator('input[type="file"]')
      .setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('One more note.') });
    await page.getByRole('button', { name: 'Загрузить' }).click();
    const note = page.getByRole('alert').filter({ hasText: 'Хранилище заполнено' });
    await note.waitFor();
    t.match(
      (await note.innerText()).replace(/\s+/g, ' '),
      'из ваших 1 МБ для документов, записей памяти и отчётов занято 1 МБ',
      'the refusal names the limit and the usage in Russian',
    );
    t.same(
      (await svc.request('GET', '/api/v1/documents', { token: svc.admin.token })).body.documents,
      [],
      'nothing was stored',
    );
  });

  await step('admin-sets-a-limit', async () => {
    await page.getByTestId('language').selectOption('en');
    await page.goto(`${svc.url}/#/admin/users`);
    const row = page.getByTestId('user-row').filter({ hasText: svc.admin.email });
    await row.getByTestId('user-storage').getByText('Service default').waitFor();
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByTestId('user-storage-mb').fill('3');
    await page.getByRole('button', { name: 'Save' }).click();
    await row.getByTestId('user-storage').getByText('3 MB').waitFor();
    t.equal(
      (await svc.request('GET', `/api/v1/admin/users/${svc.admin.id}`, { token: svc.admin.token })).body.max_storage_mb,
      3,
      'stored',
    );
    await page.goto(`${svc.url}/#/documents`);
    await page.getByTestId('storage').getByText('1 MB of 3 MB').waitFor();
    t.equal(
      await page.getByTestId('storage').getAttribute('data-exceeded'),
      'false',
      'room again under the raised limit',
    );
  });

  t.same(b.problems, [], 'no console errors');
});
