/**
 * Every web string of one language in one chunk: locales/en/web.json and the area fragments in
 * locales/en/web/*.json, bundled together (the i18n module loads this chunk when the language is used).
 */
const files = import.meta.glob<{ default: unknown }>(
  ['../../../../locales/en/web.json', '../../../../locales/en/web/*.json'],
  { eager: true },
);

export default Object.keys(files)
  .sort()
  .map((k) => files[k]!.default);
