/** Types of stryker.config.mjs for scripts/mutate/run.ts. */
export interface MutationModule {
  /** What `npm run mutate -- <name>` calls it. */
  name: string;
  /** Files mutated. */
  mutate: string[];
  /** The test files run against each mutant (those that reach it). */
  tests: string[];
}
export declare const modules: MutationModule[];
declare const config: { tap: { testFiles: string[]; nodeArgs: string[]; forceBail: boolean } } & Record<string, unknown>;
export default config;
