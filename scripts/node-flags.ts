/**
 * The Node flags the service runs with, wherever it is started: `npm start` (package.json), the
 * image (Dockerfile CMD), `npm run start:supervised` and the benchmarks all pass these, and a test
 * (test/core/node-flags.test.ts) keeps package.json and the Dockerfile in step with this list
 * (and with SERVICE_ENV below).
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
 * `--max-old-space-size=1024`: V8 lets the old generation grow by a factor that depends on the
 * heap's limit: 4× what survived the last full collection when the limit is 2 GB or more (Node's
 * default here is ~4.2 GB), 1.3–2× below. Under a 10,000-webhook burst the default let the old
 * space grow from ~45 to ~95 MB, mostly garbage promoted while its event was in flight, before the
 * next full collection; with a 1 GB limit it stays near 60–80 MB and the burst's peak resident set
 * fell by 50–100 MB, with no measurable CPU cost over 8,000 events and ~15 % more CPU per event in
 * the first 2,000 after start, while the heap grows from its start-up size through more full
 * collections (RESULTS.md, "Old generation sizing"; the CI bar's ratio is recorded with it). 1 GB is
 * several times what the largest operation needs (a backup export of 10,000 providers and 10,000
 * targets peaks near 320 MB resident with it, 390 MB without).
 *
 * Not taken: `--heap-growing-percent=100` (a factor of 2 whatever the limit). 500 assistant replies opening at once
 * grow the live heap past 1.6× and run a full collection while they stream, whose marking stalls every stream; at 2×
 * it fell outside the streams and the chunks' p99 while they opened fell from ~85 to ~20 ms, but bench:relay's peak
 * rose from ~227 to 245–250 MB, goal 3's bar (RESULTS.md, nineteenth session). The README offers it to operators.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16', '--max-old-space-size=1024'];

/**
 * The environment the service starts with, wherever it is started (as SERVICE_NODE_FLAGS); a value the operator
 * set wins (`npm start` writes each as `NAME=${NAME:-value}`, see {@link serviceEnvPrefix}).
 *
 * `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own malloc arena, up to 8 per core, and an arena
 * keeps the memory it once held. V8's helper threads (collection, compiling), libuv's thread pool and the WAL
 * checkpointer's thread all allocate (ArrayBuffer backing stores, SQLite's pages, compiled code's metadata): a
 * 10,000-webhook burst left ~11 arenas, and its peak resident set was 13 MB lower in the median with at most two
 * (216 against 229 MB, four alternating pairs, no change in CPU per event; scripts/bench/RESULTS.md,
 * "Twenty-eighth session"). glibc reads it when the process starts, so it cannot be set from main.ts.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** SERVICE_ENV as a POSIX shell prefix that keeps the operator's values: `MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}`. */
export const serviceEnvPrefix = (): string =>
  Object.entries(SERVICE_ENV)
    .map(([k, v]) => `${k}=\${${k}:-${v}}`)
    .join(' ');
