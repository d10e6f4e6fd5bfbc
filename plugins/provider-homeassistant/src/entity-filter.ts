/** Decides which entities' state changes are relayed, from the `entity_filters` config. */
import type { EntityFilters } from './config.ts';

/** Compiles a glob (`*` any run of characters, `?` one character) to an anchored RegExp. */
export function globToRegExp(glob: string): RegExp {
  let src = '';
  for (const ch of glob) {
    if (ch === '*') src += '.*';
    else if (ch === '?') src += '.';
    else src += ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  }
  return new RegExp(`^${src}$`, 'i');
}

/** The domain of an entity id (`light.kitchen` → `light`). */
export const domainOf = (entityId: string): string => entityId.split('.', 1)[0] ?? entityId;

/**
 * Builds the entity predicate. With no include list every entity passes; otherwise an entity passes
 * when its domain is listed or a glob matches. An exclude glob always wins.
 */
export function compileEntityFilter(filters: EntityFilters | undefined): (entityId: string) => boolean {
  const domains = new Set((filters?.include_domains ?? []).map((d) => d.toLowerCase()));
  const include = (filters?.include_entities ?? []).map(globToRegExp);
  const exclude = (filters?.exclude_entities ?? []).map(globToRegExp);
  const includeAll = domains.size === 0 && include.length === 0;
  return (entityId) => {
    if (exclude.some((re) => re.test(entityId))) return false;
    if (includeAll) return true;
    return domains.has(domainOf(entityId).toLowerCase()) || include.some((re) => re.test(entityId));
  };
}
