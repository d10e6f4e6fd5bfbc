/** Per-user and per-model AI usage for one day. */
import { useState } from 'preact/hooks';
import { get } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { date, num, t } from '../../lib/i18n.ts';
import type { UsageDay } from '../../lib/types.ts';
import { Card, ErrorNote, Loading, Page } from '../../ui/basics.tsx';

export function UsagePage() {
  const [day, setDay] = useState('');
  const data = useAsync(() => get<UsageDay>('/api/v1/admin/usage', { date: day || undefined }), [day]);
  const total = data.data?.users.reduce(
    (a, u) => ({ messages: a.messages + u.messages, tokens: a.tokens + u.tokens }),
    { messages: 0, tokens: 0 },
  );
  return (
    <Page title={t('usage.title')} subtitle={t('usage.subtitle')}>
      <div class="filters card">
        <label class="field">
          <span class="field-label">{t('usage.date')}</span>
          <input type="date" value={day || data.data?.date || ''} onInput={(e) => setDay(e.currentTarget.value)} />
        </label>
        {total && (
          <div class="stats">
            <div class="stat">
              <span class="stat-num">{num(total.messages)}</span>
              <span class="muted small">{t('usage.messages')}</span>
            </div>
            <div class="stat">
              <span class="stat-num">{num(total.tokens)}</span>
              <span class="muted small">{t('usage.tokens')}</span>
            </div>
          </div>
        )}
      </div>
      <ErrorNote error={data.error} />
      {!data.data ? (
        <Loading />
      ) : (
        <Card title={date(data.data.date)}>
          <div class="table-wrap">
            <table class="table">
              <thead>
                <tr>
                  <th>{t('users.email')}</th>
                  <th class="num">{t('usage.messages')}</th>
                  <th class="num">{t('usage.tokens')}</th>
                </tr>
              </thead>
              <tbody>
                {data.data.users.map((u) => (
                  <tr key={u.user_id} class={u.messages === 0 && u.tokens === 0 ? 'dim' : ''}>
                    <td>{u.email}</td>
                    <td class="num">{num(u.messages)}</td>
                    <td class="num">{num(u.tokens)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
      {data.data?.models?.length ? (
        <Card title={t('models_admin.usage_title')}>
          <div class="table-wrap">
            <table class="table" data-testid="usage-models">
              <thead>
                <tr>
                  <th>{t('models_admin.model')}</th>
                  <th class="num">{t('usage.messages')}</th>
                  <th class="num">{t('usage.tokens')}</th>
                </tr>
              </thead>
              <tbody>
                {data.data.models.map((m) => (
                  <tr key={m.model}>
                    <td>{m.model}</td>
                    <td class="num">{num(m.messages)}</td>
                    <td class="num">{num(m.tokens)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      ) : null}
    </Page>
  );
}
