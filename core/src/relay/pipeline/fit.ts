/**
 * Fitting a rendered message to its target's limits. The code lives in the contract
 * (`@herald/plugin-api`), so that the test host's `message()` fits exactly as the pipeline does.
 */
export { fitMessage, partMarker, plainOf, splitFormatted, truncateFormatted } from '../../plugin-api/index.ts';
