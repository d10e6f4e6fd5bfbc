/**
 * The chats' and messages' API shapes for the web client: type-only exports of the response schemas chats.ts and
 * messages.ts declare (definitions/chat.ts), so that the client reads what the server serializes. Keep the names
 * stable; add, do not rename.
 */
import type { Static } from 'typebox';
import type { ChatList, ChatSchema, MessagePage, MessageSchema } from './definitions/chat.ts';

/** `GET|PATCH /api/v1/chats/{id}`, `POST /api/v1/chats`; the list's `chats`. */
export type Chat = Static<typeof ChatSchema>;
/** `GET /api/v1/chats`: pinned chats first, each group newest first. */
export type Chats = Static<typeof ChatList>;
/** One message of `GET /api/v1/chats/{id}/messages` (and of the reply stream's `done`). */
export type ChatMessage = Static<typeof MessageSchema>;
/** What a message carries besides its text: a report's card or an attached document's chip. */
export type ChatAttachment = ChatMessage['attachments'][number];
/** A tool call of a reply, as shown under it. */
export type ChatToolCall = ChatMessage['tools'][number];
/** `GET /api/v1/chats/{id}/messages`: a page of the shown branch, oldest first. */
export type ChatMessagePage = Static<typeof MessagePage>;
