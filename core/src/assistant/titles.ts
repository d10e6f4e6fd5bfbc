/**
 * Generated chat titles. A chat created without a title (`title_auto`) gets one after its first
 * complete exchange: one short, non-streamed model call (at most TITLE_TOKENS tokens back) over
 * the first question and answer. Its tokens count against the user's daily token quota; it does
 * not count as a message. A chat the user named or renamed is never retitled.
 */
import fs from 'node:fs';
import type { Core } from '../core.ts';
import type { PublicUser } from '../users/users.ts';
import { type ChatRow, publicChat } from './chats.ts';
import type { ModelClient } from './model.ts';
import { bool } from './paths.ts';
import type { Quotas } from './quotas.ts';

/** The largest reply the title call may produce. */
export const TITLE_TOKENS = 24;
/** Characters of the question and of the answer the title call sees. */
const EXCERPT = 1000;

type Strings = Record<string, string>;
const cache = new Map<string, Strings>();

/** The assistant's server-side strings in `locale` (English when there are none). */
export function assistantStrings(locale: string): Strings {
  const lang = locale === 'ru' ? 'ru' : 'en';
  let s = cache.get(lang);
  if (!s) {
    s = JSON.parse(
      fs.readFileSync(new URL(`../../../locales/${lang}/assistant.json`, import.meta.url), 'utf8'),
    ) as Strings;
    cache.set(lang, s);
  }
  return s;
}

/**
 * One string, `{{name}}` filled in; with a `count` the plural form of the language is picked (`key_one`,
 * `key_few`, …).
 */
export function say(locale: string, key: string, params: Record<string, string | number> = {}): string {
  const s = assistantStrings(locale);
  const lang = locale === 'ru' ? 'ru' : 'en';
  const plural =
    typeof params.count === 'number'
      ? (s[`${key}_${new Intl.PluralRules(lang).select(params.count)}`] ?? s[`${key}_other`])
      : undefined;
  const text = plural ?? s[key] ?? key;
  return text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(params[k] ?? ''));
}

/** A model's title answer cleaned: one line, no quotes or trailing full stop, at most 80 characters. */
export function cleanTitle(raw: string): string {
  const line =
    raw
      .replace(/^\s*(title|название)\s*:\s*/i, '')
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? '';
  const bare = line
    .replace(/^["'«“„*#\s]+|["'»”*\s]+$/g, '')
    .replace(/[.。]+$/, '')
    .trim();
  return bare.length > 80 ? `${bare.slice(0, 79).trimEnd()}…` : bare;
}

/**
 * Gives `chat` a generated title when it still wants one. Returns the updated chat, or undefined
 * when nothing changed (not wanted, the model failed, or the user renamed the chat meanwhile).
 * Never throws.
 */
export async function generateTitle(opts: {
  core: Core;
  model: ModelClient;
  quotas: Quotas;
  user: PublicUser;
  chat: ChatRow;
  day: string;
  question: string;
  answer: string;
  modelName?: string;
}): Promise<ReturnType<typeof publicChat> | undefined> {
  const { core, model, quotas, user, chat } = opts;
  if (!bool((chat as ChatRow & { title_auto?: unknown }).title_auto)) return undefined;
  const log = core.logs.get('assistant');
  try {
    const { text, tokens } = await model.complete(
      [
        { role: 'system', content: say(user.locale, 'title_prompt') },
        { role: 'user', content: `${opts.question.slice(0, EXCERPT)}\n\n---\n\n${opts.answer.slice(0, EXCERPT)}` },
      ],
      { maxTokens: TITLE_TOKENS, signal: AbortSignal.timeout(20_000), model: opts.modelName },
    );
    await quotas.addTokens(user.id, opts.day, tokens);
    // The per-model usage gets the tokens too (its row exists: the reply was just counted there), not a message.
    if (opts.modelName) {
      await core.db.run(
        'UPDATE ai_usage_models SET tokens = tokens + ?, updated_at = ? WHERE user_id = ? AND day = ? AND model = ?',
        [Math.round(tokens), core.clock.now().toISOString(), user.id, opts.day, opts.modelName],
      );
    }
    const title = cleanTitle(text);
    if (!title) return undefined;
    const changed = await core.db.run('UPDATE chats SET title = ?, title_auto = ? WHERE id = ? AND title_auto = ?', [
      title,
      false,
      chat.id,
      true,
    ]);
    if (changed !== 1) return undefined;
    const row = await core.db.get<ChatRow>('SELECT * FROM chats WHERE id = ?', [chat.id]);
    return row ? publicChat(row) : undefined;
  } catch (err) {
    log.warn({ err, chat_id: chat.id }, 'could not generate a chat title');
    return undefined;
  }
}
