/** Event types of the Planka provider and their payload schemas. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

/** Where a card lives and who acted; names are empty when Planka did not include them. */
const CardBase = {
  card_id: Type.String(),
  card_name: Type.String(),
  /** Link to the card when `base_url` is configured, else empty. */
  card_url: Type.String(),
  list_name: Type.String(),
  board_name: Type.String(),
  project_name: Type.String(),
  /** Name of the Planka user who made the change. */
  user: Type.String(),
};

export const CardCreatedPayload = Type.Object({ ...CardBase, description_excerpt: Type.String() });
export const CardMovedPayload = Type.Object({ ...CardBase, from_list: Type.String(), to_list: Type.String() });
export const CardUpdatedPayload = Type.Object({
  ...CardBase,
  /** `name` and/or `description`. */
  changed_fields: Type.Array(Type.String()),
  previous_name: Type.String(),
  description_excerpt: Type.String(),
});
export const CardCommentedPayload = Type.Object({ ...CardBase, comment_excerpt: Type.String() });
export const CardDueDateSetPayload = Type.Object({
  ...CardBase,
  /** ISO 8601 timestamp as Planka sent it. */
  due_date: Type.String(),
  /** The previous due date, empty when there was none. */
  previous_due_date: Type.String(),
});

/** A sample card for "send a test event". */
const CARD = {
  card_id: '1043',
  card_name: 'Order new shelves',
  card_url: 'https://planka.example.net/cards/1043',
  list_name: 'To do',
  board_name: 'Home',
  project_name: 'Household',
  user: 'Alice',
};

export const events: Record<string, EventSpec> = {
  card_created: {
    payload: CardCreatedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'A card was created',
    example: { ...CARD, description_excerpt: 'Two shelves for the study, 80 cm wide.' },
  },
  card_moved: {
    payload: CardMovedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'A card moved to another list',
    example: { ...CARD, list_name: 'Doing', from_list: 'To do', to_list: 'Doing' },
  },
  // Edits are worth little once the night is over: the card itself shows the current text.
  card_updated: {
    payload: CardUpdatedPayload,
    quietHours: 'drop',
    severity: 'info',
    description: 'A card was renamed or its description changed',
    example: {
      ...CARD,
      changed_fields: ['name'],
      previous_name: 'Order shelves',
      description_excerpt: 'Two shelves for the study, 80 cm wide.',
    },
  },
  card_commented: {
    payload: CardCommentedPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'Someone commented on a card',
    example: { ...CARD, comment_excerpt: 'The shop has them in stock.' },
  },
  card_due_date_set: {
    payload: CardDueDateSetPayload,
    quietHours: 'defer',
    severity: 'info',
    description: 'A due date was set or changed on a card',
    example: { ...CARD, due_date: '2024-07-01T12:00:00.000Z', previous_due_date: '' },
  },
};
