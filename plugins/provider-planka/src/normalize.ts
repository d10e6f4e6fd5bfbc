/** Maps Planka webhook events to Herald events; one delivery may yield several (moved and due date). */
import type { EmittedEvent } from '@herald/plugin-api';
import type { Obj } from './payload.ts';
import { excerpt, firstIncluded, id, included, isObj, listName, obj, optStr, unexpected, userName } from './payload.ts';

export interface CardContext {
  baseUrl?: string;
}

/** Fields every card event carries, read from the card and the records Planka included with it. */
function cardBase(card: Obj, data: Obj, body: Obj, ctx: CardContext, path: string) {
  const cardId = id(card, 'id', `${path}.id`);
  return {
    card_id: cardId,
    card_name: optStr(card, 'name') ?? '',
    card_url: ctx.baseUrl ? `${ctx.baseUrl.replace(/\/+$/, '')}/cards/${encodeURIComponent(cardId)}` : '',
    list_name: listName(included(data, 'lists', card.listId)),
    board_name: optStr(included(data, 'boards', card.boardId) ?? firstIncluded(data, 'boards'), 'name') ?? '',
    project_name: optStr(firstIncluded(data, 'projects'), 'name') ?? '',
    user: userName(body.user),
  };
}

function cardCreate(body: Obj, ctx: CardContext): EmittedEvent[] {
  const data = obj(body, 'data');
  const card = obj(data, 'item', 'data.item');
  return [
    {
      type: 'card_created',
      payload: {
        ...cardBase(card, data, body, ctx, 'data.item'),
        description_excerpt: excerpt(optStr(card, 'description')),
      },
    },
  ];
}

function cardUpdate(body: Obj, ctx: CardContext): EmittedEvent[] {
  const data = obj(body, 'data');
  const card = obj(data, 'item', 'data.item');
  const prevData = obj(body, 'prevData');
  const prev = obj(prevData, 'item', 'prevData.item');
  const base = cardBase(card, data, body, ctx, 'data.item');
  const out: EmittedEvent[] = [];
  if (card.listId !== undefined && String(card.listId) !== String(prev.listId)) {
    out.push({
      type: 'card_moved',
      payload: { ...base, from_list: listName(included(prevData, 'lists', prev.listId)), to_list: base.list_name },
    });
  }
  const changed = (['name', 'description'] as const).filter((k) => k in card && (card[k] ?? '') !== (prev[k] ?? ''));
  if (changed.length) {
    out.push({
      type: 'card_updated',
      payload: {
        ...base,
        changed_fields: [...changed],
        previous_name: changed.includes('name') ? (optStr(prev, 'name') ?? '') : '',
        description_excerpt: excerpt(optStr(card, 'description')),
      },
    });
  }
  const due = card.dueDate;
  if (due !== undefined && due !== null && due !== prev.dueDate) {
    if (typeof due !== 'string') unexpected('data.item.dueDate', 'is not a string');
    out.push({
      type: 'card_due_date_set',
      payload: { ...base, due_date: due, previous_due_date: optStr(prev, 'dueDate') ?? '' },
    });
  }
  return out;
}

function commentCreate(body: Obj, ctx: CardContext): EmittedEvent[] {
  const data = obj(body, 'data');
  const comment = obj(data, 'item', 'data.item');
  const cardId = id(comment, 'cardId', 'data.item.cardId');
  const card = included(data, 'cards', cardId) ?? { id: cardId };
  const base = cardBase(card, data, body, ctx, 'data.included.cards[]');
  return [{ type: 'card_commented', payload: { ...base, comment_excerpt: excerpt(optStr(comment, 'text'), 500) } }];
}

const HANDLERS: Record<string, (body: Obj, ctx: CardContext) => EmittedEvent[]> = {
  cardCreate,
  cardUpdate,
  commentCreate,
};

/** Events for a delivery; `undefined` when Planka's event has no Herald counterpart. */
export function normalize(body: unknown, ctx: CardContext): { event: string; events: EmittedEvent[] | undefined } {
  if (!isObj(body)) unexpected('body', 'is not a JSON object');
  const event = body.event;
  if (typeof event !== 'string' || event === '') unexpected('event', 'is missing');
  const handler = Object.hasOwn(HANDLERS, event) ? HANDLERS[event] : undefined;
  return { event, events: handler ? handler(body, ctx) : undefined };
}
