/**
 * A chat with the assistant and its messages, as the API shows them. chats.ts and messages.ts answer with these
 * schemas (fields they do not name are left out) and chat-api-types.ts gives their types to the web client; this
 * module imports nothing but TypeBox.
 */
import Type from 'typebox';

export const ChatSchema = Type.Object({
  id: Type.String(),
  title: Type.String(),
  is_archived: Type.Boolean(),
  skill_id: Type.Union([Type.String(), Type.Null()]),
  /** The model the chat's replies use; null for the default. */
  model: Type.Union([Type.String(), Type.Null()]),
  /** The event the chat was opened from ("Ask the assistant"); its replies carry that event. */
  event_id: Type.Union([Type.String(), Type.Null()]),
  /** Pinned chats are listed first. */
  pinned: Type.Boolean(),
  /** The folder the user put the chat in; null for none. */
  folder: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const ChatList = Type.Object({ chats: Type.Array(ChatSchema) });
/** A folder's name: 1 to 100 characters, not only spaces (kept trimmed). */
export const MAX_FOLDER = 100;
export const MessageSchema = Type.Object({
  id: Type.String(),
  chat_id: Type.String(),
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.String(),
  status: Type.Union([Type.Literal('complete'), Type.Literal('interrupted'), Type.Literal('error')]),
  usage: Type.Union([
    Type.Object({
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
      estimated: Type.Boolean(),
    }),
    Type.Null(),
  ]),
  context_version: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      status: Type.Union([
        Type.Literal('started'),
        Type.Literal('needs_confirmation'),
        Type.Literal('done'),
        Type.Literal('failed'),
      ]),
      arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      query: Type.Optional(Type.String()),
      count: Type.Optional(Type.Integer()),
      report_id: Type.Optional(Type.String()),
      /** A call that needed the user's consent: its id and how it was decided. */
      id: Type.Optional(Type.String()),
      confirmation: Type.Optional(
        Type.Union([Type.Literal('approved'), Type.Literal('refused'), Type.Literal('expired')]),
      ),
      proposal: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      /** While a call waits for the user's consent: when the proposal expires. */
      expires_at: Type.Optional(Type.String()),
    }),
  ),
  parent_id: Type.Union([Type.String(), Type.Null()]),
  model: Type.Union([Type.String(), Type.Null()]),
  attachments: Type.Array(
    Type.Union([
      Type.Object({
        type: Type.Literal('report'),
        report_id: Type.String(),
        title: Type.String(),
        /** False once the report is deleted. */
        available: Type.Optional(Type.Boolean()),
        size_bytes: Type.Optional(Type.Integer()),
      }),
      Type.Object({
        type: Type.Literal('document'),
        document_id: Type.String(),
        /** The file's name as uploaded. */
        name: Type.String(),
        /** False once the document is deleted. */
        available: Type.Optional(Type.Boolean()),
      }),
    ]),
  ),
  alternatives: Type.Array(Type.String()),
});
export const MessagePage = Type.Object({ messages: Type.Array(MessageSchema), has_more: Type.Boolean() });
