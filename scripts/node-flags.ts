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
 *
 * `--max-old-space-size=1024`: a ceiling for the JavaScript heap, several times what the largest
 * operation needs (a backup export of 10,000 providers and 10,000 targets peaks near 320 MB resident
 * with it, 390 MB without).
 *
 * `--heap-growing-percent=100`: after each full collection V8 lets the old generation grow to a
 * factor times what survived before the next one. By default that factor depends on the heap's
 * limit: 4× when the limit is 2 GB or more (Node's default here is ~4.2 GB), about 1.6× at 1 GB.
 * - At 4×, a 10,000-webhook burst let the old space grow from ~45 to ~95 MB, mostly garbage
 *   promoted while its event was in flight, and its peak resident set was 50–100 MB higher than at
 *   1 GB's 1.6× (RESULTS.md, "Old generation sizing").
 * - At 1.6×, 500 assistant replies opening at once grow the live heap past the limit (~44 KB each),
 *   and the full collection's marking then stalls every open stream: the loop's longest gaps
 *   (50–115 ms, chunks read four at a time) fell inside the marking window in every traced run, and
 *   the chunks relayed while the streams open waited up to 85 ms at p99 (RESULTS.md, nineteenth
 *   session).
 * - This flag sets the factor to 2× in every case: the streams' p99 fell to ~20 ms, the burst's
 *   peak rose by ~10 MB (229–230 against 218–221 MB).
 * Unlike the two above, V8 does not take it from NODE_OPTIONS: it must be on the command line.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=16',
  '--max-old-space-size=1024',
  '--heap-growing-percent=100',
];
