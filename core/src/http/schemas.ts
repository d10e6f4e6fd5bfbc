import Type from 'typebox';

/** Shared TypeBox pieces for route schemas. */
export const Problem = Type.Object({
  type: Type.String(), title: Type.String(), status: Type.Integer(), detail: Type.String(), code: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
}, { $id: 'Problem' });

export const Uuid = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Uuid });
export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Uuid),
});
export const IsoTime = Type.String({ format: 'date-time' });
export const Locale = Type.Union([Type.Literal('en'), Type.Literal('ru')]);
