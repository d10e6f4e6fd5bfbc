/**
 * Waiting for something the service does (a row written, a request received, a log line, a queue
 * entered) instead of for a fixed time: a fixed wait that is long enough on an idle machine is not
 * on a loaded one, and a test that asserts after it fails there. (test/e2e/support.ts gives it as `until`;
 * test/helpers/peers.ts's waitFor does the same for a peer program, with the peer's output in its error.)
 */

/**
 * Polls `probe` every `every` ms until it returns a truthy value, and returns that value. Throws
 * after `ms` (15 s unless told: generous, it costs only a failing test's time) with a message
 * naming `what` did not happen. An error thrown by `probe` is not retried: it ends the wait.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  ms = 15_000,
  every = 20,
): Promise<Exclude<NonNullable<T>, false | 0 | ''>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as Exclude<NonNullable<T>, false | 0 | ''>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * {@link waitFor}, where an error thrown by `probe` means "not yet" rather than ending the wait: for probing a
 * process that is starting or restarting (its port refuses connections until it listens).
 */
export function waitThrough<T>(
  what: string,
  probe: () => T | Promise<T>,
  ms = 15_000,
  every = 50,
): Promise<Exclude<NonNullable<T>, false | 0 | ''>> {
  return waitFor(
    what,
    async () => {
      try {
        return await probe();
      } catch {
        return undefined;
      }
    },
    ms,
    every,
  );
}
