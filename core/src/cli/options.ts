/** Settings the command line's global options give every command (set before a command runs). */
export const openSettings = {
  /** `--migrate`: a command may bring a database that is behind to this version's schema (context.ts). */
  migrate: false,
};
