/**
 * Fields of a config that its schema does not declare. A config holds only what its schema names,
 * whatever the schema says about `additionalProperties`: an undeclared field is never read by the
 * plugin, so all it can do is carry data nobody checks (a pasted token that is then shown and backed
 * up unmasked, since only declared `Secret()` fields are masked).
 *
 * The config itself is closed (a schema without properties declares none); below it, an object is
 * closed where its schema lists properties. Maps (`Type.Record`, `patternProperties`, or
 * `additionalProperties` given as a schema on an object without properties) take any key and are
 * checked inside their values; so are arrays. Of a union, the branch that fits the value best
 * counts; an intersection declares the fields of all its members.
 */

type Schema = Record<string, unknown>;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const escape = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

function objectLike(s: Schema): boolean {
  return s.type === 'object' || isObj(s.properties) || isObj(s.patternProperties) || Array.isArray(s.allOf);
}

function arrayLike(s: Schema): boolean {
  return s.type === 'array' || isObj(s.items) || Array.isArray(s.prefixItems);
}

/** An intersection as one object schema: the properties and patterns of every member. */
function merged(s: Schema): Schema {
  if (!Array.isArray(s.allOf)) return s;
  const parts = [s, ...s.allOf.filter(isObj).map(merged)];
  const pick = (key: string) => Object.assign({}, ...parts.map((p) => (isObj(p[key]) ? p[key] : {})));
  return { type: 'object', properties: pick('properties'), patternProperties: pick('patternProperties') };
}

function walk(schema: unknown, value: unknown, at: string, top: boolean, out: string[]): void {
  if (!isObj(schema)) return;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(branches)) {
    const fits = branches
      .filter(isObj)
      .filter((b) =>
        Array.isArray(value) ? arrayLike(b) : isObj(value) ? objectLike(b) || Array.isArray(b.anyOf ?? b.oneOf) : false,
      );
    let best: string[] | undefined;
    for (const b of fits) {
      const found: string[] = [];
      walk(b, value, at, top, found);
      if (!best || found.length < best.length) best = found;
    }
    out.push(...(best ?? []));
    return;
  }
  if (Array.isArray(value)) {
    const items = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, i) => walk(items[i] ?? schema.items, item, `${at}/${i}`, false, out));
    return;
  }
  if (!isObj(value)) return;
  const s = merged(schema);
  const props = isObj(s.properties) ? s.properties : {};
  const patterns = Object.entries(isObj(s.patternProperties) ? s.patternProperties : {});
  const extra = isObj(s.additionalProperties) ? s.additionalProperties : undefined;
  const declaresFields = Object.keys(props).length > 0;
  // The config's own level is closed unless it is a map; nested objects are closed where they list fields.
  const closed = declaresFields || (top && objectLike(s) && !patterns.length && !extra);
  for (const [key, v] of Object.entries(value)) {
    const path = `${at}/${escape(key)}`;
    const sub = Object.hasOwn(props, key)
      ? props[key]
      : (patterns.find(([p]) => new RegExp(p, 'u').test(key))?.[1] ?? (closed ? undefined : extra));
    if (sub === undefined && closed) out.push(path);
    else walk(sub, v, path, false, out);
  }
}

/**
 * JSON pointers (relative to the config, e.g. `/webhook_token`, `/mapping/extra`) of every field
 * of `config` that `schema` does not declare.
 * @internal Used by the core to refuse such fields on save and drop them from stored configs.
 */
export function undeclaredFields(schema: unknown, config: unknown): string[] {
  const out: string[] = [];
  walk(schema, config, '', true, out);
  return out;
}

/** A copy of `config` without the fields at `pointers` (from {@link undeclaredFields}). @internal */
export function withoutFields<T>(config: T, pointers: string[]): T {
  const copy = structuredClone(config);
  for (const p of pointers) {
    const parts = p
      .slice(1)
      .split('/')
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = parts.pop()!;
    let holder: unknown = copy;
    for (const part of parts)
      holder = Array.isArray(holder) ? holder[Number(part)] : isObj(holder) ? holder[part] : undefined;
    if (isObj(holder)) delete holder[last];
  }
  return copy;
}
