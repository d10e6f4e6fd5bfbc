/**
 * The scheduled backups' form in a real Chromium against the real service: it starts from the stored
 * settings, and what the administrator changes (on, every 12 hours, keep 3, secrets included) is what
 * the service then has; a second visit shows it.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';
import { ensureBuilt, openBrowser } from './browser.ts';

ensureBuilt();

const svc = await startService({ SERVICE_LOG_LEVEL: 'WARNING' });
const b = await openBrowser(undefined, { shots: 'backup-schedule-failed' });
const { page, step } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
});

const open = async () => {
  await page.evaluate(() => {
    location.hash = '/backups';
  });
  await page.getByLabel('Every (hours)').waitFor();
};

t.test('the schedule form saves what is changed', async (t) => {
  const before = (await svc.request('GET', '/api/backup/scheduled', { token: svc.admin.token })).body;
  await step('open the backups page', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
    await open();
  });
  t.equal(
    await page.getByLabel('Every (hours)').inputValue(),
    before.backup_scheduled_interval_hours,
    'stored interval',
  );
  t.equal(await page.getByLabel('Files to keep').inputValue(), before.backup_retention_count, 'stored retention');
  t.equal(
    await page.getByLabel('Create backups on a schedule').isChecked(),
    before.backup_scheduled_enabled === 'true',
    'stored switch',
  );

  await step('change and save', async () => {
    const card = page.locator('form', { has: page.getByLabel('Every (hours)') });
    await page.getByLabel('Create backups on a schedule').setChecked(before.backup_scheduled_enabled !== 'true');
    await page.getByLabel('Every (hours)').fill('12');
    await page.getByLabel('Files to keep').fill('3');
    await card.getByRole('combobox').selectOption('include');
    await card.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved').first().waitFor();
  });
  const after = (await svc.request('GET', '/api/backup/scheduled', { token: svc.admin.token })).body;
  t.same(after, {
    backup_scheduled_enabled: before.backup_scheduled_enabled === 'true' ? 'false' : 'true',
    backup_scheduled_interval_hours: '12',
    backup_secrets_mode: 'include',
    backup_retention_count: '3',
  });

  await step('visit again', async () => {
    await page.reload();
    await open();
  });
  t.equal(await page.getByLabel('Every (hours)').inputValue(), '12', 'the saved interval shows');
  t.same(b.problems, [], 'no console errors');
});
