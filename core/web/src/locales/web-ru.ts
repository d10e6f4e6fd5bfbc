/**
 * The Russian strings a first visit needs (locales/first-visit.ts), from locales/ru/web.json and the area fragments
 * in locales/ru/web/*.json, bundled by the build; more-ru.ts holds the rest.
 */
import strings from 'virtual:herald-strings/ru/first';

export default [strings];
