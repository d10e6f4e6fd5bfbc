/** Small numeric helpers shared by the benchmarks: clocks, percentiles, printing. */
import fs from 'node:fs';
import os from 'node:os';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across threads and processes of one machine. */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile (0–100) of `values` by nearest rank; NaN when empty. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Float64Array.from(values).sort();
  if (!sorted.length) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export interface Dist {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function dist(values: ArrayLike<number>): Dist {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) =>
    sorted.length
      ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
      : Number.NaN;
  return {
    n: sorted.length,
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

export const fmt = (n: number, digits = 1): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
    : String(n);

/** Prints one result line: `name  value unit  [goal] [ok/MISS]`. */
export function line(name: string, value: string, goal?: { text: string; ok: boolean }): void {
  const g = goal ? `   goal ${goal.text}: ${goal.ok ? 'met' : 'MISSED'}` : '';
  process.stdout.write(`  ${name.padEnd(40)} ${value}${g}\n`);
}

export function heading(text: string): void {
  process.stdout.write(`\n== ${text}\n`);
}

/** An integer from the environment, with a default (so a quick run can shrink the counts). */
export function envInt(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

/** Appends one JSON record to `BENCH_JSON` when set, for collecting a run's figures. */
export function record(bench: string, figures: Record<string, unknown>): void {
  const file = process.env.BENCH_JSON;
  if (!file) return;
  fs.appendFileSync(file, `${JSON.stringify({ bench, at: new Date().toISOString(), ...figures })}\n`);
}

/** Kilobytes from a `/proc/<pid>/status` field such as VmHWM or VmRSS; NaN when the process is gone. */
export function procKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) a process has used so far, in ms; NaN when it is gone. */
export function procCpuMs(pid: number): number {
  try {
    return statCpuMs(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU ms of a `/proc/…/stat` line (a process's or a thread's). */
function statCpuMs(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the command name, in clock ticks (100 Hz).
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** CPU time (ms, user + system) of this process so far: the load generators and sinks that run in it. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Issue 27's goal 2, its rate half, on this machine: the CPU µs an event that delivering 0.5× the ingestion ceiling's
 * rate (`ceilingRate`, requests/s) leaves the service, when the load generator and the sink (this process, `toolsUs`
 * an event) run on the same cores.
 */
export function rateHalfRoom(ceilingRate: number, toolsUs: number): { cores: number; rate: number; roomUs: number } {
  const cores = os.availableParallelism();
  const rate = 0.5 * ceilingRate;
  return { cores, rate, roomUs: (cores * 1e6) / rate - toolsUs };
}

/**
 * CPU ms of each of a process's threads so far, summed by thread name (`MainThread`, `V8Worker` for V8's helpers,
 * which compile and collect garbage, `WorkerThread` for worker_threads such as the WAL checkpointer, libuv's pool).
 * Threads that ended are not counted: take the difference of two readings while they run.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const t of tasks) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      byName.set(name, (byName.get(name) ?? 0) + statCpuMs(stat));
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return byName;
}

/** µs per item of each thread name between two readings of {@link threadCpuMs}, largest first. */
export function threadCpuPer(before: Map<string, number>, after: Map<string, number>, n: number): [string, number][] {
  return [...after]
    .map(([name, ms]): [string, number] => [name, ((ms - (before.get(name) ?? 0)) * 1000) / n])
    .filter(([, us]) => us > 0)
    .sort((a, b) => b[1] - a[1]);
}
