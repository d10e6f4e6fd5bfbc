/** What the core does with an inbound bot update: remember the chat, register it on /start, say so. */
import type { Core } from '../../core.ts';
import { newId } from '../../http/ids.ts';
import type { MessagingBotDriver, ParsedUpdate, SeenChat } from '../../plugin-api/index.ts';
import { BOT_CALL_TIMEOUT_MS, type BotRow, deadline, driverContext, safeMessage } from './driver.ts';
import type { BotMessages } from './messages.ts';

/**
 * Creates or updates the chat of an update in place (UNIQUE bot_id, chat_id), so replaying an
 * update is harmless. Returns the chat when the update is a `/start` command and the chat was
 * registered by it, for the caller to greet.
 */
export async function recordUpdate(
  core: Core,
  bot: Pick<BotRow, 'id' | 'user_id'>,
  update: ParsedUpdate,
): Promise<SeenChat | undefined> {
  const chat = update.chat;
  if (!chat) return undefined;
  const now = core.clock.now().toISOString();
  const start = update.command === 'start';
  await core.db.run(
    `INSERT INTO bot_chats (id, bot_id, user_id, chat_id, type, title, username, is_forum, registered, last_seen_at,
      created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (bot_id, chat_id) DO UPDATE SET type = excluded.type, title = COALESCE(excluded.title, bot_chats.title),
      username = COALESCE(excluded.username, bot_chats.username), is_forum = excluded.is_forum, last_seen_at =
      excluded.last_seen_at`,
    [
      newId(),
      bot.id,
      bot.user_id,
      chat.chatId,
      chat.type,
      chat.title ?? null,
      chat.username ?? null,
      chat.isForum ?? false,
      start,
      now,
      now,
    ],
  );
  if (!start) return undefined;
  await core.db.run('UPDATE bot_chats SET registered = ? WHERE bot_id = ? AND chat_id = ?', [
    true,
    bot.id,
    chat.chatId,
  ]);
  return chat;
}

/** Tells a freshly registered chat what to do next, in the bot owner's language. Failures are logged, never thrown. */
export async function greet(
  core: Core,
  bot: Pick<BotRow, 'id' | 'user_id' | 'token' | 'api_root'> & { kind?: string },
  chat: SeenChat,
  driver: MessagingBotDriver,
  messages: BotMessages,
  signal?: AbortSignal,
): Promise<void> {
  try {
    const owner = await core.db.get<{ locale: string }>('SELECT locale FROM users WHERE id = ?', [bot.user_id]);
    await driver.reply(
      driverContext(core, bot),
      bot.token,
      chat,
      messages.text('registered', owner?.locale ?? 'en'),
      deadline(BOT_CALL_TIMEOUT_MS, signal),
    );
  } catch (err) {
    core.logs
      .get('bots')
      .warn({ bot_id: bot.id, chat_id: chat.chatId, error: safeMessage(core, err) }, 'could not reply to /start');
  }
}
