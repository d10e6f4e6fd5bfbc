/**
 * The models users may choose (`GET /api/v1/models`) and the administrator's model settings
 * (`GET, PUT /api/v1/admin/models`); models.ts.
 */
import Type, { type Static } from 'typebox';

export const ModelsView = Type.Object({
  models: Type.Array(Type.Object({ id: Type.String() }), { description: 'The default first' }),
  default: Type.String(),
});
export type Models = Static<typeof ModelsView>;

export const AdminModelsView = Type.Object({
  models_allowed: Type.Array(Type.String()),
  default_model: Type.String(),
  /** What the endpoint lists (null when it does not answer `GET /models`). */
  endpoint_models: Type.Union([Type.Array(Type.String()), Type.Null()]),
  /** AI_MODEL, used when `default_model` is empty. */
  configured_model: Type.String(),
  /** What users may pick now. */
  effective: Type.Array(Type.String()),
});
export type AdminModels = Static<typeof AdminModelsView>;
