/**
 * The chat header's status line, on a desktop and on a phone alike: the model the replies use and today's usage
 * against the daily limits (the meters above it fold away on a phone).
 */
import { num, t } from '../../lib/i18n.ts';
import type { Quota } from '../../lib/types.ts';

export function ChatStatus({ model, quota }: { model: string | null; quota: Quota | null }) {
  if (!model && !quota) return null;
  return (
    <p class="chat-status muted small" data-testid="chat-status">
      {model && (
        <span class="chat-status-model" data-testid="chat-model">
          {t('chat_extras.model', { model })}
        </span>
      )}
      {quota && (
        <span
          class={`chat-status-quota${quota.messages_exceeded || quota.tokens_exceeded ? ' reached' : ''}`}
          data-testid="chat-quota"
        >
          {t('chat_extras.quota_messages', { used: num(quota.messages_used), limit: num(quota.message_limit) })}
          {' · '}
          {t('chat_extras.quota_tokens', { used: num(quota.tokens_used), limit: num(quota.token_limit) })}
        </span>
      )}
    </p>
  );
}
