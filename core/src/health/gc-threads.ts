/**
 * V8's helper threads (named `V8Worker`: concurrent marking, the parallel parts of a scavenge, concurrent compiling
 * and sweeping) run at the main thread's priority. When the machine's cores are busy, a full collection's concurrent
 * marking then takes the CPU from the main thread, which serves every request and relays every open stream, for
 * tens of milliseconds at a time: with 500 assistant replies streaming on a 2-core machine the main thread ran only
 * 6–26 ms of the 35–80 ms gaps of its event loop that fell in a marking window, and those gaps set the chunks' p99.
 * At a lower priority (a higher nice value) the main thread gets most of a contended core and the helpers the rest;
 * marking still finishes, as the main thread also marks in steps while it allocates.
 *
 * Linux only (the threads are found in /proc/self/task); a thread's nice value is its own there. Raising it needs no
 * privilege, so this works in a container as any user.
 */
import fs from 'node:fs';
import os from 'node:os';
import { ConfigurationError } from '../config/config.ts';

/** The name Node gives V8's platform worker threads. */
export const V8_WORKER = 'V8Worker';
/**
 * How much higher the helpers' nice value is unless HERALD_GC_THREADS_NICE says otherwise. Node runs four of them,
 * and a full collection's marking keeps all four busy: at 10 the kernel's weights (110 against the main thread's 1024)
 * leave the main thread ~70 % of a contended core; at 5 (335 each) it kept ~40 % and the streams' marking gaps stayed.
 * The cost, on a webhook burst beside its load generators: the marking finishes later and the burst's peak resident
 * set rose by 10–20 MB (234–243 against 221–227 MB), the CPU per event did not move beyond the runs' noise
 * (RESULTS.md, nineteenth session).
 */
export const DEFAULT_NICE = 10;

/**
 * HERALD_GC_THREADS_NICE: how much higher V8's helper threads' nice value is than the main thread's, 1–19 (default 10;
 * 19 at most in all), or `off` (also `0`).
 */
export function gcThreadsNiceFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.HERALD_GC_THREADS_NICE?.trim();
  if (raw === undefined || raw === '') return DEFAULT_NICE;
  if (raw.toLowerCase() === 'off' || raw === '0') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 19)
    throw new ConfigurationError(`HERALD_GC_THREADS_NICE must be a number from 1 to 19, or off (got "${raw}")`);
  return n;
}

export interface Lowered {
  /** The helper threads changed. */
  threads: number;
  /** The nice value they now have. */
  nice: number;
  /** Why none or not all could be changed. */
  error?: string;
  /** The system has no /proc/self/task (not Linux): nothing was tried. */
  unsupported?: true;
}

/**
 * Gives every V8 helper thread of this process a nice value `by` higher than the calling (main) thread's, 19 at most;
 * the main thread and the others keep theirs.
 */
export function lowerGcThreadPriority(by: number, taskDir = '/proc/self/task'): Lowered {
  const nice = Math.min(19, os.getPriority() + by);
  let tids: string[];
  try {
    tids = fs.readdirSync(taskDir);
  } catch (err) {
    const error = `cannot list the process's threads: ${(err as Error).message}`;
    return { threads: 0, nice, error, unsupported: true };
  }
  let threads = 0;
  let error: string | undefined;
  for (const tid of tids) {
    try {
      if (fs.readFileSync(`${taskDir}/${tid}/comm`, 'utf8').trim() !== V8_WORKER) continue;
      os.setPriority(Number(tid), nice);
      threads++;
    } catch (err) {
      error ??= `thread ${tid}: ${(err as Error).message}`;
    }
  }
  if (threads === 0 && !error) error = `no thread named ${V8_WORKER}`;
  return { threads, nice, ...(error ? { error } : {}) };
}

/** Each thread of a process: its name and its nice value (the 19th field of /proc/<pid>/task/<tid>/stat). */
export function threadNices(pid: number | 'self' = 'self'): { comm: string; nice: number }[] {
  const dir = `/proc/${pid}/task`;
  return fs.readdirSync(dir).map((tid) => {
    const stat = fs.readFileSync(`${dir}/${tid}/stat`, 'utf8');
    // "<tid> (<comm>) <state> …": the fields after the name, which may hold spaces, start after its last parenthesis.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(rest[16]) };
  });
}
