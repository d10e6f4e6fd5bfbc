/** `GET /api/v1/search`: the caller's chat titles and messages that match (search.ts). */
import Type, { type Static } from 'typebox';

export const SearchHitView = Type.Object({
  chat_id: Type.String(),
  chat_title: Type.String(),
  message_id: Type.Union([Type.String(), Type.Null()]),
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Null()]),
  snippet: Type.String(),
  created_at: Type.String(),
});
export const SearchResults = Type.Object({ results: Type.Array(SearchHitView) });
export type SearchHit = Static<typeof SearchHitView>;
