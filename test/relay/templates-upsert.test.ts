/**
 * Saving an own template goes through `upsertRow`: the first save inserts the row, a later one for
 * the same user, event type and locale updates its text and time in place (same id, same creation
 * time), and a save in another locale is a row of its own. Runs on the backend of the pass.
 */
import t from 'tap';
import { upsertRow } from '../../core/src/db/rows.ts';
import { TEMPLATE_KEY, type TemplateDbRow } from '../../core/src/relay/definitions/template.ts';
import { startService } from '../helpers/service.ts';

t.test('upsertRow inserts a template, then updates the one with the same key', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const db = s.service.core.db;
  const row = (id: string, locale: 'en' | 'ru', title: string, at: string): TemplateDbRow => ({
    id,
    user_id: s.admin.id,
    event_type: 'thing_happened',
    locale,
    title,
    body: `${title} body`,
    created_at: at,
    updated_at: at,
  });
  const save = (r: TemplateDbRow) => upsertRow(db, 'templates', r, TEMPLATE_KEY, ['title', 'body', 'updated_at']);
  const read = () => db.all<TemplateDbRow>('SELECT * FROM templates WHERE user_id = ? ORDER BY locale', [s.admin.id]);

  await save(row('00000000-0000-7000-8000-000000000001', 'en', 'First', '2026-01-01T00:00:00.000Z'));
  t.match(await read(), [{ id: '00000000-0000-7000-8000-000000000001', title: 'First', body: 'First body' }]);

  await save(row('00000000-0000-7000-8000-000000000002', 'en', 'Second', '2026-01-02T00:00:00.000Z'));
  t.same(
    (await read()).map((r) => [r.id, r.locale, r.title, r.body, r.created_at, r.updated_at]),
    [
      [
        '00000000-0000-7000-8000-000000000001',
        'en',
        'Second',
        'Second body',
        '2026-01-01T00:00:00.000Z',
        '2026-01-02T00:00:00.000Z',
      ],
    ],
    'the same key: updated in place, its id and creation time kept',
  );

  await save(row('00000000-0000-7000-8000-000000000003', 'ru', 'Третий', '2026-01-03T00:00:00.000Z'));
  t.same(
    (await read()).map((r) => [r.locale, r.title]),
    [
      ['en', 'Second'],
      ['ru', 'Третий'],
    ],
    'another locale: a row of its own',
  );
});
