/**
 * Turn-taking for the CPU-heavy steps of the message route (setting a reply up, starting its
 * stream, saving it). A burst of messages would otherwise run all those steps back to back in
 * one drain of the microtask queue (the database answers synchronously under its promise API),
 * keeping the event loop from the replies already streaming for hundreds of milliseconds. Here
 * only a few steps start per event-loop turn; the rest wait for the next turns, with the
 * sockets served in between. An idle service admits a step at once.
 */

/** Steps started per event-loop turn. */
const PER_TURN = 2;

const waiting: (() => void)[] = [];
let head = 0;
let admitted = 0;
let resetQueued = false;

function newTurn(): void {
  resetQueued = false;
  admitted = 0;
  while (head < waiting.length && admitted < PER_TURN) {
    const go = waiting[head]!;
    waiting[head++] = undefined as unknown as () => void;
    admit();
    go();
  }
  if (head === waiting.length) {
    waiting.length = 0;
    head = 0;
  }
}

function admit(): void {
  admitted++;
  queueReset();
}

/** The check phase of this loop turn (or of the next one, when called from it) starts a new turn. */
function queueReset(): void {
  if (resetQueued) return;
  resetQueued = true;
  setImmediate(newTurn);
}

/**
 * Resolves when the caller may run its step: at once (undefined) when this turn still has room
 * and nobody waits, else in a later turn, in arrival order. Use as `await turn()`.
 */
export function turn(): Promise<void> | undefined {
  if (head === waiting.length && admitted < PER_TURN) {
    admit();
    return undefined;
  }
  const p = new Promise<void>((resolve) => {
    waiting.push(resolve);
  });
  queueReset();
  return p;
}
