/**
 * The report, as the API shows it and as the `reports` table holds it: a health-compilation PDF of
 * a user's, stored as a file (its path is never part of the API). reports.ts and the web client's
 * types (assistant/api-types.ts) derive from here.
 */
import Type, { type Static } from 'typebox';

export const ReportLocale = Type.Union([Type.Literal('en'), Type.Literal('ru')]);
export const ReportView = Type.Object({
  id: Type.String(),
  title: Type.String(),
  locale: Type.String(),
  created_at: Type.String(),
  size_bytes: Type.Integer({ description: 'The PDF file' }),
});
export type Report = Static<typeof ReportView>;
export const ReportList = Type.Object({ reports: Type.Array(ReportView) });
/** `POST /api/v1/reports`: a title (else the default in the report's language) and the language (else the user's). */
export const ReportCreateBody = Type.Object(
  { title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), locale: Type.Optional(ReportLocale) },
  { additionalProperties: false },
);

/** A `reports` row. */
export interface ReportRow {
  id: string;
  user_id: string;
  title: string;
  locale: Static<typeof ReportLocale>;
  size_bytes: number;
  created_at: string;
}
