/** The answer to the user's decision on an action the assistant proposed (consent.ts). */
import Type, { type Static } from 'typebox';

export const ToolCallOutcomeView = Type.Object({
  id: Type.String(),
  /** The tool: `send_notification`, `schedule_message`. */
  name: Type.String({ description: 'The tool (`send_notification`, `schedule_message`)' }),
  status: Type.Union([Type.Literal('done'), Type.Literal('failed'), Type.Literal('refused')]),
  /** What was sent or scheduled (`done`), why it failed (`failed`: `error`); null when refused. */
  result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: 'What was sent or scheduled (`done`), or why not (`failed`: `error`); null when refused',
  }),
});
export type ToolCallOutcome = Static<typeof ToolCallOutcomeView>;
