/** Usage against the daily limits, in the chat header; a reached limit is highlighted. */
import { dateTime, num, relative, t, time } from '../lib/i18n.ts';
import type { Quota } from '../lib/types.ts';

function Meter({
  label,
  used,
  limit,
  reached,
  testId,
}: {
  label: string;
  used: number;
  limit: number;
  reached: boolean;
  testId: string;
}) {
  const pct = limit > 0 ? Math.min(100, Math.round((used / limit) * 100)) : 100;
  return (
    <div
      class={`quota-item${reached ? ' reached' : pct >= 80 ? ' near' : ''}`}
      data-testid={testId}
      data-reached={reached ? 'true' : 'false'}
    >
      <div class="quota-label">
        <span>{label}</span>
        <span class="quota-num">{t('quota.used_of', { used: num(used), limit: num(limit) })}</span>
      </div>
      <div
        class="meter"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={Math.min(used, limit)}
      >
        <span style={{ width: `${pct}%` }} />
      </div>
      {reached && <span class="quota-flag">{t('quota.reached')}</span>}
    </div>
  );
}

export function QuotaBar({ quota }: { quota: Quota | null }) {
  if (!quota) return <div class="quota" aria-hidden="true" />;
  return (
    <div class="quota" role="group" aria-label={t('quota.title')}>
      <Meter
        label={t('quota.messages')}
        used={quota.messages_used}
        limit={quota.message_limit}
        reached={quota.messages_exceeded}
        testId="quota-messages"
      />
      <Meter
        label={t('quota.tokens')}
        used={quota.tokens_used}
        limit={quota.token_limit}
        reached={quota.tokens_exceeded}
        testId="quota-tokens"
      />
      <div class="quota-reset" title={dateTime(quota.resets_at)}>
        {t('quota.resets', { time: time(quota.resets_at), relative: relative(quota.resets_at) })}
      </div>
    </div>
  );
}
