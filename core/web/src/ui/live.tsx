/** The live connection's indicator, and a due time that keeps itself current ("next attempt in 2 minutes"). */
import { useEffect, useState } from 'preact/hooks';
import { dateTime, relative, t } from '../lib/i18n.ts';
import { useLiveState } from '../lib/live.ts';

/** A quiet dot and word beside a page's actions: live, connecting or reconnecting. */
export function LiveBadge() {
  const s = useLiveState();
  if (s === 'off') return null;
  return (
    <span
      class={`live-badge live-${s}`}
      role="status"
      title={t(`live.${s}_help`)}
      data-testid="live-state"
      data-state={s}
    >
      <span class="live-dot" aria-hidden="true" />
      {t(`live.${s}`)}
    </span>
  );
}

/** When a delivery goes out: its next attempt after a failure, or the end of the quiet hours that defer it. */
export function DueTime({ at, deferred = false }: { at: string; deferred?: boolean }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), 10_000);
    return () => clearInterval(id);
  }, []);
  const key = deferred ? 'live.released' : 'live.next_attempt';
  const text =
    !deferred && Date.parse(at) - now <= 1000 ? t('live.next_attempt_now') : t(key, { when: relative(at, now) });
  return (
    <span class="muted small due-time" title={t(`${key}_help`, { time: dateTime(at) })} data-testid="due-time">
      {text}
    </span>
  );
}
