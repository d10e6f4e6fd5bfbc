/**
 * The document, as the API shows it and as the `documents` table holds it: an uploaded text,
 * Markdown or PDF file whose extracted text is kept (the file itself is not). documents.ts and the
 * web client's types (assistant/api-types.ts) derive from here.
 */
import Type, { type Static } from 'typebox';

export const DocumentView = Type.Object({
  id: Type.String(),
  filename: Type.String(),
  media_type: Type.String(),
  size_bytes: Type.Integer({ description: 'The uploaded file' }),
  text_chars: Type.Integer({ description: 'The extracted text' }),
  created_at: Type.String(),
  /** In a search's results (`?q=`): the text around the first match. */
  excerpt: Type.Optional(Type.String({ description: 'With `q`: the text around the first match' })),
});
export type DocumentInfo = Static<typeof DocumentView>;
export const DocumentList = Type.Object({ documents: Type.Array(DocumentView) });
/** One document with its extracted text. */
export const DocumentWithText = Type.Object({ ...DocumentView.properties, content: Type.String() });

/** A `documents` row (without `search_text`, which only the search reads). */
export interface DocumentRow {
  id: string;
  user_id: string;
  filename: string;
  media_type: string;
  size_bytes: number;
  content: string;
  created_at: string;
}
