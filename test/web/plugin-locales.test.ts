/**
 * The provider, target and tracker forms show the plugins' own words in the interface language
 * (names, field labels and hints, option labels, event-type descriptions), and switch when the
 * language does.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const svc = await startService({
  SERVICE_PLUGINS: '@herald/provider-bridge-self,@herald/provider-immich,@herald/target-email',
  SERVICE_LOG_LEVEL: 'WARNING',
});
const b = await openBrowser();
const { page } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
});

/** A form label, with or without the required-field mark. */
const label = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\*)?$`);

/** Waits up to 5 s for the element to show (isVisible() alone checks once, before a slow render). */
const visible = (l: import('playwright-core').Locator) =>
  l.waitFor({ state: 'visible', timeout: 5000 }).then(
    () => true,
    () => false,
  );

const nav = async (name: string) => {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  await page.locator('#page-title').waitFor();
};

t.test('plugin forms in Russian, then in English after switching', async (t) => {
  const immich = await svc.request('POST', '/api/providers', {
    token: svc.admin.token,
    body: {
      kind: 'immich',
      name: 'Photos',
      enabled: false,
      config: { base_url: 'http://127.0.0.1:9', api_key: 'k', timeout_seconds: 5 },
    },
  });
  t.equal(immich.status, 201);

  await page.goto(svc.url);
  await page.getByLabel('Email').fill(svc.admin.email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.getByTestId('language').selectOption('ru');
  await page.getByRole('heading', { name: 'Обзор' }).waitFor();

  await nav('Источники');
  t.ok(
    await visible(page.locator('.item-card', { hasText: 'Photos' }).getByText('Immich (фотобиблиотека)')),
    'the card names the kind in Russian',
  );
  await page.getByRole('button', { name: 'Добавить источник' }).click();
  let dialog = page.getByRole('dialog');
  t.equal(
    await dialog.getByTestId('provider-kind').locator('option:checked').textContent(),
    'Immich (фотобиблиотека)',
    'the kind list is in Russian',
  );
  await dialog.getByLabel(label('Адрес сервера')).waitFor();
  t.ok(
    await visible(dialog.getByText('Адрес сервера Immich, например https://photos.example.net')),
    'field hints in Russian',
  );
  t.ok(await visible(dialog.getByLabel(label('Время ожидания запроса, секунд'))), 'field labels in Russian');
  await b.shot('provider-form-ru');
  await dialog.getByRole('button', { name: 'Отмена' }).click();
  await dialog.waitFor({ state: 'detached' });

  await nav('Получатели');
  await page.getByRole('button', { name: 'Добавить получателя' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByLabel(label('SMTP-сервер')).waitFor();
  t.same(
    (await dialog.getByTestId('cfg-security').locator('option').allTextContents()).slice(1),
    ['STARTTLS', 'Неявный TLS', 'Без шифрования'],
    'option labels in Russian',
  );
  await dialog.getByRole('button', { name: 'Отмена' }).click();
  await dialog.waitFor({ state: 'detached' });

  await nav('Трекеры');
  await page.getByRole('button', { name: 'Добавить трекер' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByText('В отслеживаемый альбом добавлены фото или видео, или они из него удалены').waitFor();
  t.ok(await visible(dialog.getByLabel(label('Альбомы'))), 'tracker fields in Russian');
  await dialog.getByRole('button', { name: 'Отмена' }).click();
  await dialog.waitFor({ state: 'detached' });

  await page.getByTestId('language').selectOption('en');
  await page.getByRole('heading', { name: 'Trackers' }).waitFor();
  await page.getByRole('button', { name: 'Add tracker' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByText('Photos or videos were added to or removed from a followed album').waitFor();
  t.pass('the plugins are fetched again in the new language');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await nav('Providers');
  await page.locator('.item-card', { hasText: 'Photos' }).getByText('Immich (photo library)').waitFor();
  t.same(b.problems, [], 'no console errors');
});
