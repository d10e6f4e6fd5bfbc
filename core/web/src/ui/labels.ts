/**
 * Words for the codes the service stores: event types, severities, plugin kinds. Each is shown in
 * the interface language; the code stays available where an operator asks for it (a tooltip).
 * The English failure texts are put in words by failures.ts.
 */
import { has, t } from '../lib/i18n.ts';
import type { Plugin } from '../lib/types.ts';

/** An event type's name: the client's label, else the plugin's description of it, else the code. */
export function eventLabel(type: string, plugins?: Plugin[]): string {
  if (has(`event_types.${type}`)) return t(`event_types.${type}`);
  for (const p of plugins ?? []) {
    const d = p.events[type]?.description;
    if (d) return d.replace(/\.$/, '');
  }
  return type;
}

export const severityLabel = (s: string): string => (has(`severity.${s}`) ? t(`severity.${s}`) : s);

/** A provider or target kind's display name (from its plugin), else the kind's code. */
export const kindLabel = (kind: string, plugins?: Plugin[], of?: Plugin['kind']): string =>
  plugins?.find((p) => p.id === kind && (!of || p.kind === of))?.display_name ?? kind;

/** Where an event came from when no source of the user's sent it (a scheduled action), else the kind's name. */
export const sourceLabel = (kind: string, plugins?: Plugin[]): string =>
  has(`sources.${kind}`) ? t(`sources.${kind}`) : kindLabel(kind, plugins, 'provider');
