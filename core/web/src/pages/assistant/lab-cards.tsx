/**
 * The assistant's tools over the relay, as a reply shows them: a compact line for the event log
 * tools (search_events, event_stats, delivery_status), and for the acting tools
 * (send_notification, schedule_message) a card with what would be done and Send/Schedule and
 * Cancel while it waits for the user, then the outcome. The answer goes to
 * `POST /api/v1/chats/{chat_id}/tool-calls/{id}`; the reply's stream then carries the outcome.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { ChatToolCall } from '../../../../src/assistant/chat-api-types.ts';
import type { NotificationProposal, ScheduleProposal, TargetRef } from '../../../../src/assistant/lab-actions.ts';
import { post } from '../../lib/api.ts';
import { dateTime, locale, num, t } from '../../lib/i18n.ts';
import { Badge, Button } from '../../ui/basics.tsx';
import { zoneName } from '../../ui/timezone.tsx';
import { toast } from '../../ui/toast.tsx';

/** A tool call as the stream and the saved message carry it, with the consent fields. */
export type LabCall = ChatToolCall;
/**
 * A proposal as lab-actions.ts makes it (a notification's or a scheduled message's fields), read back from its JSON:
 * what the card shows of either.
 */
type Proposal = Partial<NotificationProposal & ScheduleProposal>;

const READ = new Set(['search_events', 'event_stats', 'delivery_status']);
const ACT = new Set(['send_notification', 'schedule_message']);
export const isLabTool = (name: string) => READ.has(name) || ACT.has(name);

/** The call's line or card. */
export function LabTool({ call, chatId }: { call: LabCall; chatId: string }) {
  return ACT.has(call.name) ? <ConsentCard call={call} chatId={chatId} /> : <ReadLine call={call} />;
}

function ReadLine({ call }: { call: LabCall }) {
  const running = call.status === 'started';
  const vars = { query: call.query ?? '', count: call.count ?? 0, n: num(call.count ?? 0) };
  let text: string;
  if (call.status === 'failed') text = t('lab.tool_failed');
  else if (call.name === 'event_stats')
    text = running ? t('lab.tool_event_stats_running') : t('lab.tool_event_stats', vars);
  else if (call.name === 'delivery_status')
    text = running ? t('lab.tool_delivery_status_running') : t('lab.tool_delivery_status');
  else if (call.query || (typeof call.arguments?.query === 'string' && call.arguments.query)) {
    const q = { ...vars, query: call.query || String(call.arguments?.query ?? '') };
    text = running ? t('lab.tool_search_events_running', q) : t('lab.tool_search_events', q);
  } else text = running ? t('lab.tool_list_events_running') : t('lab.tool_list_events', vars);
  return (
    <div class="tool tool-search" data-testid="tool-line" data-tool={call.name}>
      <Badge tone={call.status === 'failed' ? 'danger' : call.status === 'done' ? 'ok' : 'info'}>{text}</Badge>
    </div>
  );
}

const names = (targets: TargetRef[] | undefined) => (targets ?? []).map((x) => x.name).join(', ');

function ConsentCard({ call, chatId }: { call: LabCall; chatId: string }) {
  const [busy, setBusy] = useState<'' | 'approve' | 'refuse'>('');
  const [answered, setAnswered] = useState(false);
  const p: Proposal = call.proposal ?? {};
  const schedule = call.name === 'schedule_message';
  if (call.status === 'started')
    return (
      <div class="tool" data-testid="tool-line" data-tool={call.name}>
        <Badge tone="info">{t('lab.proposed')}</Badge>
      </div>
    );
  if (call.status !== 'needs_confirmation') {
    // Decided: one line saying how.
    let text: string;
    let tone: 'ok' | 'warn' | 'danger' = 'ok';
    if (call.confirmation === 'refused') {
      text = schedule ? t('lab.refused_schedule') : t('lab.refused');
      tone = 'warn';
    } else if (call.confirmation === 'expired') {
      text = t('lab.expired');
      tone = 'warn';
    } else if (call.status === 'failed') {
      text = t('lab.failed_generic');
      tone = 'danger';
    } else
      text = schedule
        ? t('lab.scheduled', { name: String(p.name ?? ''), targets: names(p.targets) })
        : t('lab.sent', { targets: names(p.targets) });
    return (
      <div class="tool" data-testid="consent-outcome" data-tool={call.name} data-confirmation={call.confirmation ?? ''}>
        <Badge tone={tone}>{text}</Badge>
      </div>
    );
  }
  const decide = async (approve: boolean) => {
    setBusy(approve ? 'approve' : 'refuse');
    try {
      const r = await post<{ status: string; result: { error?: string } | null }>(
        `/api/v1/chats/${chatId}/tool-calls/${call.id}`,
        { approve },
      );
      setAnswered(true);
      if (r.status === 'failed')
        toast.error(new Error(r.result?.error ? t('lab.failed', { error: r.result.error }) : t('lab.failed_generic')));
    } catch (err) {
      toast.error(err);
    } finally {
      setBusy('');
    }
  };
  const lang = locale();
  const message = p.messages?.[lang] ?? p.messages?.en;
  const other = p.targets?.some((x) => x.locale !== lang);
  return (
    <section
      class="consent-card card"
      data-testid="consent-card"
      data-tool={call.name}
      aria-label={schedule ? t('lab.schedule_title') : t('lab.send_title')}
    >
      <h3>{schedule ? t('lab.schedule_title') : t('lab.send_title')}</h3>
      <dl class="consent-details">
        <dt>{t('lab.to')}</dt>
        <dd data-testid="consent-targets">
          {p.targets?.map((x, i) => (
            <span key={x.id}>
              {i ? ', ' : ''}
              {x.name} <span class="muted small">({t(`lab.language_${x.locale === 'ru' ? 'ru' : 'en'}`)})</span>
            </span>
          ))}
        </dd>
        {schedule && (
          <>
            <dt>{t('lab.schedule')}</dt>
            <dd>
              <code>{String(p.schedule ?? '')}</code> ·{' '}
              <span title={String(p.timezone ?? '')}>{zoneName(String(p.timezone ?? 'UTC'))}</span>
            </dd>
          </>
        )}
        {schedule && Array.isArray(p.next_runs) && (
          <>
            <dt>{t('lab.next_runs')}</dt>
            <dd>{p.next_runs.map(dateTime).join(' · ')}</dd>
          </>
        )}
        <dt>{t('lab.message')}</dt>
        <dd data-testid="consent-message">
          <strong>{schedule ? String(p.title ?? '') : message?.title}</strong>
          <br />
          {schedule ? String(p.body ?? '') : message?.text}
        </dd>
        {!schedule &&
          other &&
          (['en', 'ru'] as const)
            .filter((l) => l !== lang && p.messages?.[l])
            .map((l) => (
              <Fragment key={l}>
                <dt>{t('lab.in_language', { language: t(`lab.language_${l}`) })}</dt>
                <dd>
                  <strong>{p.messages![l].title}</strong>
                  <br />
                  {p.messages![l].text}
                </dd>
              </Fragment>
            ))}
      </dl>
      {answered ? (
        <p class="muted small" role="status">
          {t('lab.deciding')}
        </p>
      ) : (
        <>
          <p class="muted small">{t('lab.expires', { time: dateTime(call.expires_at) })}</p>
          <div class="form-actions">
            <Button
              small
              onClick={() => void decide(false)}
              busy={busy === 'refuse'}
              disabled={Boolean(busy)}
              data-testid="consent-cancel"
            >
              {t('common.cancel')}
            </Button>
            <Button
              small
              variant="primary"
              icon="send"
              onClick={() => void decide(true)}
              busy={busy === 'approve'}
              disabled={Boolean(busy)}
              data-testid="consent-approve"
            >
              {schedule ? t('lab.schedule_button') : t('lab.send')}
            </Button>
          </div>
        </>
      )}
    </section>
  );
}
