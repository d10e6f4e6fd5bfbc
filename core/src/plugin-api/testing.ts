/** The plugin test host, kept at `@herald/core/plugin-api/testing` for existing plugins. */
export * from '@herald/plugin-api/testing';
