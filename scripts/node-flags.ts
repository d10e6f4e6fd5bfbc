/**
 * The Node flags the service runs with, wherever it is started: `npm start` (package.json), the
 * image (Dockerfile CMD), `npm run start:supervised` and the benchmarks all pass these, and a test
 * (test/core/node-flags.test.ts) keeps package.json and the Dockerfile in step with this list.
 * V8 sizes its heap when the process starts, so these cannot be set from main.ts
 * (`v8.setFlagsFromString` after start leaves the young generation as it was).
 *
 * `--max-semi-space-size=16`: V8's young generation grows up to 2 × 32 MB by default on a 64-bit
 * host. With 500 assistant replies streaming on a loaded machine, the allocation rate (~90 MB/s,
 * mostly short-lived: model chunks parsed, frames written) grows it to that size, ~130–170 KB of
 * resident memory per open stream, and each scavenge then copies 10–30 ms worth of survivors in one
 * pause that every stream waits for. Capped at 16 MB it stays at 45–60 KB per open stream; 8 MB
 * saved a little more memory but cost the relay ~15 % more CPU per delivered event (objects
 * promoted early, more old-generation work), 16 MB did not (scripts/bench/RESULTS.md, "Assistant
 * streams and the young generation").
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
