/**
 * Scheduled actions, test events and backups housekeeping in a real Chromium against the real
 * service: an action created through the form (a sub-minute schedule refused in words, a valid one
 * previewed with its next five runs), run now and received by a loopback sink; a tracker's "send a
 * test event" reaching its target; a stored backup deleted; apply-restart asking first, Cancel
 * changing nothing; and the pages at phone width with every row's status and actions on screen.
 */
import t from 'tap';
import { upload } from '../backup/support.ts';
import { startService, startSink } from '../helpers/service.ts';
import { ensureBuilt, openBrowser, until } from './browser.ts';

ensureBuilt();

const sink = await startSink();
const svc = await startService({ SERVICE_LOG_LEVEL: 'INFO', SERVICE_SUPERVISED: 'false' });
const b = await openBrowser(undefined, { shots: 'actions-backups-failed' });
const { page, step, nav } = b;
page.setDefaultTimeout(8000);
t.teardown(async () => {
  await b.close();
  await svc.stop();
  await sink.close();
});
const token = svc.admin.token;

// The relay set up through the API: a provider, a tracker linked to a target that posts to the sink.
const provider = (
  await svc.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Build server', config: { shared_token: 'sharedtoken1' } },
  })
).body;
const tracker = (
  await svc.request('POST', '/api/trackers', { token, body: { provider_id: provider.id, name: 'Builds' } })
).body;
const target = (
  await svc.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'Team sink', config: { url: sink.url }, locale: 'en' },
  })
).body;
await svc.request('PUT', `/api/trackers/${tracker.id}/targets/${target.id}`, { token });

t.test('scheduled actions, test events and backups in the browser', async (t) => {
  await step('login', async () => {
    await b.logIn(svc.url, svc.admin.email, 'correct horse battery');
  });

  await step('create-action', async () => {
    await nav('Scheduled actions');
    await page.getByText('No scheduled actions yet').waitFor();
    await page.getByRole('button', { name: 'New action' }).click();
    const form = page.getByTestId('action-form');
    await form.getByTestId('action-name').fill('Stand-up reminder');
    await form.getByTestId('action-kind').selectOption('message');
    await form.getByTestId('action-timezone').selectOption('Europe/Berlin');
    // Every 30 seconds: refused as the user types, in words, before anything is sent.
    await form.getByTestId('action-schedule').fill('*/30 * * * * *');
    const error = form.getByTestId('field-error');
    await error.waitFor();
    t.match(await error.textContent(), /more often than once a minute/, 'sub-minute refused in words');
    t.equal(await form.getByTestId('next-run').count(), 0, 'no next runs for a refused schedule');
    // A schedule that never fires: refused by the service's check, said in words (the 422 is expected).
    b.allow(/status of 422.*schedule-preview/);
    await form.getByTestId('action-schedule').fill('0 9 31 2 *');
    await until(
      async () => /never runs/.test((await error.textContent().catch(() => '')) ?? ''),
      'the never-fires error',
    );
    // Saving a refused schedule is stopped with the same words.
    await form.getByTestId('action-schedule').fill('* * * * * *');
    await form.getByTestId('action-title').fill('Stand-up');
    await form.getByTestId('action-body').fill('Stand-up on {{date}}');
    await form.getByTestId('action-target').check();
    await form.getByTestId('action-save').click();
    t.match(await error.textContent(), /more often than once a minute/, 'save refused: sub-minute');
    t.equal((await svc.request('GET', '/api/actions', { token })).body.actions.length, 0, 'nothing was created');

    // A valid schedule: five next runs, the same the service computes.
    await form.getByTestId('action-schedule').fill('30 9 * * 1-5');
    await until(async () => (await form.getByTestId('next-run').count()) === 5, 'five next runs');
    const want = (
      await svc.request(
        'GET',
        `/api/actions/schedule-preview?schedule=${encodeURIComponent('30 9 * * 1-5')}&timezone=Europe%2FBerlin`,
        { token },
      )
    ).body.next as string[];
    const shown = await form.getByTestId('next-run').allTextContents();
    const fmt = (iso: string) =>
      new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Europe/Berlin' }).format(
        new Date(iso),
      );
    t.same(shown, want.map(fmt), "the five runs the service computes, in the action's zone");
    t.match(shown[0], /09:30/, 'wall-clock time in Berlin');
    t.match(await form.getByTestId('schedule-preview').textContent(), /Weekdays at 09:30/, 'the schedule in words');
    await b.shot('actions-form');
    await form.getByTestId('action-save').click();
    await page.getByTestId('action-row').waitFor();
    const saved = (await svc.request('GET', '/api/actions', { token })).body.actions;
    t.match(
      saved,
      [
        {
          name: 'Stand-up reminder',
          kind: 'message',
          schedule: '30 9 * * 1-5',
          timezone: 'Europe/Berlin',
          enabled: true,
          config: { target_ids: [target.id], title: 'Stand-up', body: 'Stand-up on {{date}}' },
        },
      ],
      'stored as filled in',
    );
    t.equal(saved[0].next_run_at, want[0], 'the next run is the first previewed one');
    t.match(
      await page.getByTestId('action-row').textContent(),
      /Weekdays at 09:30/,
      'the list shows the schedule in words',
    );
  });

  await step('run-now', async () => {
    await page.getByTestId('action-run').click();
    const got = await sink.waitFor(1);
    t.equal(got[0]?.body.title, 'Stand-up', 'the sink received the message');
    t.match(got[0]?.body.body, /^Stand-up on \d{1,2} [A-Z][a-z]+ \d{4}$/);
    await until(
      async () =>
        /OK|ok/i.test((await page.getByTestId('action-row').textContent()) ?? '') &&
        !(await page.getByTestId('action-row').textContent())?.includes('Not run yet'),
      'the last run shown',
    );
    t.equal(
      (await svc.request('GET', '/api/actions', { token })).body.actions[0].last_status,
      'ok',
      'the run is recorded',
    );
  });

  await step('disable', async () => {
    await page.getByTestId('action-enabled').uncheck();
    await until(
      async () => (await svc.request('GET', '/api/actions', { token })).body.actions[0].enabled === false,
      'the action off',
    );
    t.equal(
      (await svc.request('GET', '/api/actions', { token })).body.actions[0].next_run_at,
      null,
      'no next run while off',
    );
  });

  await step('test-event', async () => {
    await nav('Trackers');
    await page.getByRole('row').filter({ hasText: 'Builds' }).getByTestId('test-event').click();
    const got = await sink.waitFor(2);
    t.equal(got[1]?.body.title, '[Test] Thing: ', "the tracker's target received the test event");
    t.equal(got[1]?.body.test, true);
    await page.getByText(/Test event “thing_happened” sent to 1 target/).waitFor();
    const events = (await svc.request('GET', `/api/events?provider_id=${provider.id}`, { token })).body.events;
    t.match(events[0], { test: true, event_type: 'thing_happened' }, 'marked as a test in the event log');
    await nav('Providers');
    await page.getByTestId('test-event').first().waitFor();
  });

  await step('delete-backup', async () => {
    const first = (await svc.request('POST', '/api/backup/files', { token })).body.filename as string;
    const second = (await svc.request('POST', '/api/backup/files', { token })).body.filename as string;
    await nav('Backups');
    const row = page.getByRole('row').filter({ hasText: first });
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Really delete?' }).click();
    await page.getByText('The backup file was deleted.').waitFor();
    await row.waitFor({ state: 'detached' });
    const files = (await svc.request('GET', '/api/backup/files', { token })).body.files.map(
      (f: { filename: string }) => f.filename,
    );
    t.same(files, [second], 'gone from GET /api/backup/files, the other kept');
  });

  await step('apply-restart-cancel', async () => {
    const envelope = (await svc.request('GET', '/api/backup/export', { token })).text;
    t.equal((await upload(svc.url, token, envelope)).status, 201, 'a restore is staged');
    await page.reload();
    await page.getByTestId('staged-restore').waitFor();
    // Each kind of record in the plan by its name in the reader's language, beside the name the notes below it use.
    const models = page.getByTestId('restore-kind-assistant_models');
    t.match(
      await models.innerText(),
      /^Assistant models assistant_models\t0\t0\t0\t1$/,
      "the assistant's models in the plan, unchanged",
    );
    await page.getByTestId('language').selectOption('ru');
    await models.getByText('Модели ассистента').waitFor();
    t.match(
      await page.getByTestId('restore-kind-tracker_targets').innerText(),
      /^Связи трекеров с получателями tracker_targets/,
      'in Russian',
    );
    await page.getByTestId('language').selectOption('en');
    await models.getByText('Assistant models').waitFor();
    await page.getByRole('button', { name: 'Apply and restart' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restart and restore?' });
    await dialog.waitFor();
    t.match(await dialog.textContent(), /replaces its configuration/);
    await b.shot('apply-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    t.equal((await svc.request('GET', '/api/backup/pending-restore', { token })).status, 200, 'still staged');
    t.notOk(
      svc.logs().some((l) => /restarting to apply/.test(l.msg ?? '')),
      'no restart was asked for',
    );
    await page.getByTestId('staged-restore').waitFor();
    t.equal((await svc.request('DELETE', '/api/backup/pending-restore', { token })).status, 204);
  });

  await step('phone', async () => {
    await svc.request('POST', '/api/backup/files', { token });
    await page.setViewportSize({ width: 390, height: 844 });
    const checks: [string, string][] = [
      ['/actions', 'action-row'],
      ['/trackers', 'test-event'],
      ['/providers', 'test-event'],
      ['/backups', 'backup-download'],
    ];
    for (const [path, testId] of checks) {
      await page.goto(`${svc.url}/#${path}`);
      await page.getByTestId(testId).first().waitFor();
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      t.ok(overflow <= 0, `${path}: no horizontal scrolling (${overflow}px)`);
      // Every button and status badge in the rows or cards lies inside the screen's width.
      const outside = await page.evaluate(
        () =>
          [
            ...document.querySelectorAll(
              'main .row-actions .btn, main .card-foot .btn, main td .badge, main .card-head .badge, ' +
                'main td input[type="checkbox"]',
            ),
          ]
            .map((el) => el.getBoundingClientRect())
            .filter((r) => r.width > 0 && (r.left < 0 || r.right > window.innerWidth)).length,
      );
      t.equal(outside, 0, `${path}: every status and action is on screen`);
      await b.shot(`phone${path.replace('/', '-')}`);
    }
  });

  t.same(b.problems, [], 'no console errors');
});
