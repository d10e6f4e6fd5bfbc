import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Core } from '../core.ts';
import type { ChatRow } from './chats.ts';
import { personalContext, primaryContext } from './context.ts';
import { eventContext } from './event-context.ts';
import type { MessageRow } from './messages.ts';
import { estimateTokens } from './paths.ts';
import { visibleSkill } from './skills.ts';

export interface Assembled {
  messages: ChatCompletionMessageParam[];
  /** Version of the primary context that went into the request. */
  contextVersion: number;
}

const PER_MESSAGE_OVERHEAD = 4;
export const messageTokens = (m: ChatCompletionMessageParam): number =>
  PER_MESSAGE_OVERHEAD +
  estimateTokens(
    typeof m.content === 'string'
      ? m.content
      : JSON.stringify(m.content ?? '') + JSON.stringify((m as { tool_calls?: unknown }).tool_calls ?? ''),
  );

/** Bounds of the memory entries marked "always include" in the personal layer: entries, characters in all. */
export const ALWAYS_INCLUDE = { entries: 30, chars: 4000 };

/**
 * The user's memory entries marked "always include", newest first, as one block of the personal
 * layer (at most ALWAYS_INCLUDE entries and characters); empty when there are none.
 */
async function alwaysIncluded(core: Core, userId: string): Promise<string> {
  const rows = await core.db.all<{ content: string; category: string | null; recorded_at: string | null }>(
    'SELECT content, category, recorded_at FROM memory_entries WHERE user_id = ? AND always_include = ? ' +
      'ORDER BY id DESC LIMIT ?',
    [userId, true, ALWAYS_INCLUDE.entries],
  );
  const lines: string[] = [];
  let used = 0;
  for (const r of rows) {
    const category = r.category ? `[${r.category}] ` : '';
    const when = r.recorded_at ? ` (${r.recorded_at})` : '';
    const line = `- ${category}${r.content.replace(/\s+/g, ' ').trim()}${when}`;
    if (used + line.length > ALWAYS_INCLUDE.chars) break;
    used += line.length;
    lines.push(line);
  }
  return lines.length
    ? `Facts the user saved in their memory and asked you to always keep in mind:\n${lines.join('\n')}`
    : '';
}

/**
 * Builds the request for one reply, in a fixed order: the primary context, the user's personal
 * context (with the memory entries marked "always include"), the chat's skill prompt, the event a
 * chat was opened from with "Ask the assistant" (each a system message, skipped when empty), then as much of
 * the conversation as fits `config.ai.contextTokens` (newest kept, estimated at ~4 chars/token),
 * ending with the new user message. Only the shown branch counts (alternatives left aside are not
 * sent), and failed replies with no text are left out of the history.
 */
export async function assembleContext(
  core: Core,
  userId: string,
  chat: ChatRow,
  latest: MessageRow,
  locale = 'en',
): Promise<Assembled> {
  const [primary, personal, skill, always, event] = await Promise.all([
    primaryContext(core.db),
    personalContext(core.db, userId),
    chat.skill_id ? visibleSkill(core.db, userId, chat.skill_id) : Promise.resolve(undefined),
    alwaysIncluded(core, userId),
    chat.event_id ? eventContext(core, userId, chat.event_id, locale) : Promise.resolve(''),
  ]);
  const system: ChatCompletionMessageParam[] = [];
  const personalLayer = [personal.content.trim(), always].filter(Boolean).join('\n\n');
  for (const text of [primary.content, personalLayer, skill?.prompt, event])
    if (text?.trim()) system.push({ role: 'system', content: text });

  const current: ChatCompletionMessageParam = { role: 'user', content: latest.content };
  let budget = core.config.ai.contextTokens - system.reduce((n, m) => n + messageTokens(m), 0) - messageTokens(current);
  const history: ChatCompletionMessageParam[] = [];
  let cursor = latest.id;
  outer: while (budget > 0) {
    // Only what the request carries: a page of whole rows would build every column of 100 messages.
    const page = await core.db.all<Pick<MessageRow, 'id' | 'role' | 'content'>>(
      'SELECT id, role, content FROM chat_messages WHERE chat_id = ? AND active = ? AND id < ? ' +
        'ORDER BY id DESC LIMIT 100',
      [chat.id, true, cursor],
    );
    for (const row of page) {
      cursor = row.id;
      if (!row.content) continue;
      const m: ChatCompletionMessageParam =
        row.role === 'user' ? { role: 'user', content: row.content } : { role: 'assistant', content: row.content };
      const cost = messageTokens(m);
      if (cost > budget) break outer;
      budget -= cost;
      history.push(m);
    }
    // A short page was the last one: no need to ask for the next (empty) page.
    if (page.length < 100) break;
  }
  return { messages: [...system, ...history.reverse(), current], contextVersion: primary.version };
}
