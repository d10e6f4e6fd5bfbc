/**
 * The plugin contract as the core sees it. The contract itself is the `@herald/plugin-api` package;
 * this path stays so that `@herald/core/plugin-api` keeps working for existing plugins.
 */
export * from '@herald/plugin-api';
