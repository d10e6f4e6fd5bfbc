/**
 * The English strings a first visit needs (locales/first-visit.ts), from locales/en/web.json and the area fragments
 * in locales/en/web/*.json, bundled by the build; more-en.ts holds the rest.
 */
import strings from 'virtual:herald-strings/en/first';

export default [strings];
