import { assistantEntities } from './assistant.ts';
import { Setting, User } from './core.ts';
import { Action, Bot, BotChat, Provider, Target, Template, Tracker, TrackerTarget } from './relay.ts';

export * from './core.ts';
export * from './relay.ts';

/** Every entity the ORM knows. Features append theirs here. */
export const entities = [
  User,
  Setting,
  Provider,
  Tracker,
  Target,
  TrackerTarget,
  Bot,
  BotChat,
  Action,
  Template,
  ...assistantEntities,
];
