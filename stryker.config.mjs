/**
 * Mutation testing (StrykerJS with its tap runner) of the modules that hold the product's rules.
 * `npm run mutate` runs every module below one after the other (scripts/mutate/run.ts), each
 * against only the fast tests that cover it; `npm run mutate -- redact auth` runs the named ones.
 * Slow on two cores (minutes to an hour per module): a weekly or on-demand job, not part of every
 * CI run. Scores and the survivors' explanations: docs/decisions/mutation-testing.md.
 *
 * The tests run as the suite runs them: TypeScript by Node's type stripping (tap's TypeScript
 * plugin is off) with the `herald-source` condition, plus a resolve hook that keeps imports of the
 * workspace packages inside Stryker's sandbox (scripts/mutate/sandbox-resolve.mjs).
 */

/** One module: what is mutated, and the test files that cover it (each runs as its own process). */
export const modules = [
  {
    name: 'quiet-hours',
    mutate: ['core/src/relay/quiet-hours/quiet-hours.ts', 'core/src/relay/pipeline/decide.ts'],
    tests: ['core/src/relay/quiet-hours/quiet-hours.test.ts', 'core/src/relay/pipeline/decide.test.ts'],
  },
  {
    name: 'outbound-policy',
    mutate: ['core/src/net/address-policy.ts', 'core/src/net/cidr.ts', 'core/src/net/instance-allow.ts'],
    tests: ['core/src/net/address-policy.test.ts', 'core/src/net/outbound.test.ts'],
  },
  {
    // The SSRF-safe client around the policy (pinning, redirects, timeouts, body cap); its tests open loopback servers.
    name: 'outbound-client',
    mutate: ['core/src/net/outbound.ts'],
    tests: ['core/src/net/outbound.test.ts', 'core/src/net/outbound-details.test.ts'],
  },
  {
    name: 'auth',
    mutate: ['core/src/auth/passwords.ts', 'core/src/auth/login-limiter.ts'],
    tests: ['core/src/auth/passwords.test.ts', 'core/src/auth/login-limiter.test.ts'],
  },
  {
    name: 'rate-limit',
    mutate: ['core/src/http/rate-limit.ts'],
    tests: ['core/src/http/rate-limit.test.ts'],
  },
  {
    // Its unit test: an in-memory SQLite database and the routes on a bare server (no service started).
    name: 'quotas',
    mutate: ['core/src/assistant/quotas.ts'],
    tests: ['core/src/assistant/quotas.test.ts'],
  },
  {
    name: 'backup-guards',
    mutate: ['core/src/backup/json-guard.ts'],
    tests: ['test/backup/json-guard.test.ts'],
  },
  {
    // Its unit test: a core of hand-made plugins, no service started (the restore tests under test/backup
    // cover it too, but start a service: ~28 s a mutant).
    name: 'backup-sanitizer',
    mutate: ['core/src/backup/sanitize.ts'],
    tests: ['core/src/backup/sanitize.test.ts'],
  },
  {
    name: 'self-monitoring',
    mutate: ['core/src/plugins/self-monitoring.ts', 'core/src/relay/pipeline/monitor.ts'],
    tests: ['core/src/plugins/self-monitoring.test.ts', 'core/src/relay/pipeline/monitor.test.ts'],
  },
  {
    name: 'redact',
    mutate: ['core/src/logging/redact.ts', 'core/src/relay/routes/secrets.ts'],
    tests: ['core/src/logging/redact.test.ts', 'core/src/relay/routes/secrets.test.ts'],
  },
  {
    name: 'templates',
    mutate: ['core/src/relay/templates/engine.ts'],
    tests: ['core/src/relay/templates/engine.test.ts'],
  },
  {
    name: 'plugin-validator',
    mutate: ['packages/plugin-api/src/validate.ts'],
    tests: ['test/plugins/validate-unit.test.ts'],
  },
];

export default {
  $schema: './node_modules/@stryker-mutator/core/schema/stryker-schema.json',
  packageManager: 'npm',
  testRunner: 'tap',
  plugins: ['@stryker-mutator/tap-runner'],
  tap: {
    testFiles: modules.flatMap((m) => m.tests),
    nodeArgs: ['--conditions=herald-source', '--import', './scripts/mutate/sandbox-resolve.mjs'],
    forceBail: true,
  },
  // Per test file: each mutant runs only the files that reach it.
  coverageAnalysis: 'perTest',
  mutate: modules.flatMap((m) => m.mutate),
  // One test process at a time by default (two cores are shared with everything else on a CI
  // runner or a workstation); STRYKER_CONCURRENCY=n runs n at once where there are cores to spare.
  concurrency: Number(process.env.STRYKER_CONCURRENCY) || 1,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  // TypeScript 7 has no JavaScript API for Stryker's tsconfig rewriting; the tests need no tsconfig
  // (Node strips the types), so Stryker is pointed at none.
  tsconfigFile: 'stryker-has-no-tsconfig.json',
  tempDirName: 'test-output/stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['.tap', 'test-output', 'core/web/dist', '.data', 'reports', '*.db', '*.db-wal', '*.db-shm'],
  reporters: ['clear-text', 'progress-append-only', 'json'],
  jsonReporter: { fileName: 'test-output/mutation/all.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 90, low: 85 },
};
