/**
 * The contexts a reply starts from, as the API shows them: the primary one (an administrator's,
 * every chat; version 0 means never written) and each user's personal one (context.ts).
 */
import Type, { type Static } from 'typebox';

/** The primary context's text, as written (the API's body and a backup's record). */
export const PrimaryContextText = Type.String({ maxLength: 200_000 });
/** A personal context's text, as written. */
export const PersonalContextText = Type.String({ maxLength: 32_000 });

export const PrimaryContextView = Type.Object({
  content: Type.String(),
  version: Type.Integer(),
  updated_at: Type.Union([Type.String(), Type.Null()]),
});
export const PersonalContextView = Type.Object({
  content: Type.String(),
  updated_at: Type.Union([Type.String(), Type.Null()]),
});
export type PrimaryContext = Static<typeof PrimaryContextView>;
export type PersonalContext = Static<typeof PersonalContextView>;
