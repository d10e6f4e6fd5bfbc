/**
 * What the built service shares with the plugins it loads: the bare specifiers a plugin imports at run time
 * (`typebox` and its subpaths, the plugin contract) and the file of the built service each one is answered
 * with, so that a plugin and the core use one copy of each (one typebox, one set of error classes).
 * Used by the build (scripts/build/server.ts: one entry per specifier) and by the built launcher
 * (scripts/build/main.ts: a resolve hook that answers plugins with these files).
 */

/** The subpaths typebox exports besides `.` (typebox/package.json "exports"). */
export const TYPEBOX_SUBPATHS = ['compile', 'error', 'format', 'guard', 'schema', 'system', 'type', 'value'] as const;

/** Specifier → the built entry's file name (in the build's directory) that re-exports it. */
export const SHARED_ENTRIES: Readonly<Record<string, string>> = {
  typebox: 'shared-typebox.js',
  ...Object.fromEntries(TYPEBOX_SUBPATHS.map((s) => [`typebox/${s}`, `shared-typebox-${s}.js`])),
  '@herald/plugin-api': 'shared-plugin-api.js',
  // The older path of the contract (core/package.json "exports"), still accepted for plugins.
  '@herald/core/plugin-api': 'shared-plugin-api.js',
};
