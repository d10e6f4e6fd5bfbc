/**
 * Every web string of one language in one chunk: locales/ru/web.json and the area fragments in
 * locales/ru/web/*.json, bundled together (the i18n module loads this chunk when the language is used).
 */
const files = import.meta.glob<{ default: unknown }>(
  ['../../../../locales/ru/web.json', '../../../../locales/ru/web/*.json'],
  { eager: true },
);

export default Object.keys(files)
  .sort()
  .map((k) => files[k]!.default);
