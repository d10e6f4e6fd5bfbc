/**
 * The strings a first visit needs: the shell (sidebar, language switch, toasts, problem texts), the login and setup
 * forms, and the overview with its checklist and charts. Each entry is a top-level section of the web strings or one
 * key in it. The build (core/web/vite.config.ts) puts these in each language's first chunk (web-<lang>) and every
 * other string in a second one (more-<lang>), which the client loads with the first page that is not the overview.
 * A key missing from the first chunk still shows: looking it up loads the second chunk and draws again.
 */
export const FIRST_VISIT = [
  'app',
  'auth',
  'builtin',
  'charts',
  'common',
  'connection',
  'errors',
  'event_types',
  'failures',
  'form',
  'language_names',
  'languages',
  'live',
  'nav',
  'onboarding',
  'overview',
  'overview_next',
  'problem',
  'providers.webhook_help',
  'providers.webhook_url',
  'quota',
  'reasons',
  'rejections',
  'severity',
  'sources',
  'status',
  'targets.send_test',
  'targets.test_failed',
  'targets.test_ok',
];

/** True when `key` (dotted) is one of the first visit's strings. */
export const firstVisit = (key: string): boolean => FIRST_VISIT.some((p) => key === p || key.startsWith(`${p}.`));
