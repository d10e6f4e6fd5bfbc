/** An enabled plugin as `GET /api/plugins` describes it, in the caller's language. */
import Type from 'typebox';
import type { JsonSchema } from '../../plugins/api-types.ts';
import { LocaleSchema } from '../vocabulary.ts';
import { Nullable } from './common.ts';

/** One event type a provider plugin emits. */
export const PluginEventView = Type.Object({
  severity: Type.String(),
  /** What the event does in quiet hours unless a tracker says otherwise. */
  quiet_hours: Type.String(),
  description: Nullable(Type.String()),
  /** The JSON Schema of its payload. */
  payload_schema: Type.Unknown(),
});

export const PluginInfoView = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('provider'), Type.Literal('target')]),
  display_name: Type.String(),
  description: Nullable(Type.String()),
  /**
   * The JSON Schema of its config, titles and descriptions in the caller's language. Serialized as it is (any
   * JSON); typed as the keywords a form reads.
   */
  config_schema: Type.Unsafe<JsonSchema>(Type.Unknown()),
  /** A provider's JSON Schema of a tracker's config, or null. */
  tracker_schema: Type.Unsafe<JsonSchema | null>(Type.Unknown()),
  secret_paths: Type.Array(Type.String()),
  events: Type.Record(Type.String(), PluginEventView),
  /** How a provider receives events (`webhook`, `poll`, `internal`, ...), or null. */
  ingest: Nullable(Type.String()),
  /** A target's limits (lengths, formats), or null. */
  limits: Type.Unknown(),
  core_managed: Type.Boolean(),
  has_bot_driver: Type.Boolean(),
});
export const PluginList = Type.Object({ locale: LocaleSchema, plugins: Type.Array(PluginInfoView) });
