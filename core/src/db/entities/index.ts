import { User, Setting } from './core.ts';
import { Provider, Tracker, Target, TrackerTarget, Bot, BotChat, Action, Template } from './relay.ts';
import { assistantEntities } from './assistant.ts';

export * from './core.ts';
export * from './relay.ts';

/** Every entity the ORM knows. Features append theirs here. */
export const entities = [User, Setting, Provider, Tracker, Target, TrackerTarget, Bot, BotChat, Action, Template, ...assistantEntities];
