/**
 * The restore planner's machinery: matching a backup record to an existing row, deciding what the
 * conflict mode does with it, and collecting the SQL steps that apply the plan. A conflict is an
 * existing record (same id or same unique key) that the backup would change; identical records are
 * "unchanged", not conflicts. A record matching two different existing rows is ambiguous.
 */
import type { Static } from 'typebox';
import type { Core } from '../core.ts';
import type { Queryable } from '../db/database.ts';
import { Database as Db } from '../db/database.ts';
import { HttpError } from '../http/problem.ts';
import { canonicalJson } from './envelope.ts';
import { getAt, hasAt, setAt } from './secret-paths.ts';
import type { RestoreSummaryView } from './views.ts';

export const CONFLICT_MODES = ['overwrite', 'skip', 'fail'] as const;
export type ConflictMode = (typeof CONFLICT_MODES)[number];

/** The plan's summary, as the staged restore shows it (views.ts `RestoreSummaryView`). */
export type Summary = Static<typeof RestoreSummaryView>;
export type Conflict = Summary['conflicts'][number];
export type Counts = Summary['counts'][string];

/** A stored row as the planner reads it when no definition types it. */
export type StoredRow = Record<string, unknown>;
type Step = (q: Queryable) => Promise<void>;
export type Decision = 'insert' | 'update' | 'keep' | 'same';

/** The status detail (and reason) of a record restored without one of its secrets. */
export const SECRET_MISSING = 'secret missing from backup';

export class Planner {
  readonly core: Core;
  readonly q: Queryable;
  readonly mode: ConflictMode;
  readonly now: string;
  readonly steps: Step[] = [];
  readonly summary: Summary = { counts: {}, conflicts: [], skipped: [], disabled: [], warnings: [] };
  /** Backup id → id in this service, for records matched by a unique key (or given a fresh id). */
  readonly maps = {
    users: new Map<string, string>(),
    providers: new Map<string, string>(),
    trackers: new Map<string, string>(),
    bots: new Map<string, string>(),
  };
  /** Owner (in this service) of each tracker and target after the restore, to keep links within one user. */
  readonly owners = { trackers: new Map<string, string>(), targets: new Map<string, string>() };
  /**
   * Ids (in this service) of records that stay out (kept under skip with nothing stored): what needs them is skipped
   * too.
   */
  readonly absent = new Set<string>();

  constructor(core: Core, q: Queryable, mode: ConflictMode, now: Date) {
    this.core = core;
    this.q = q;
    this.mode = mode;
    this.now = now.toISOString();
  }

  map(kind: keyof Planner['maps'], id: string): string {
    return this.maps[kind].get(id) ?? id;
  }

  step(fn: Step): void {
    this.steps.push(fn);
  }

  private count(table: string, what: keyof Counts): void {
    (this.summary.counts[table] ??= { created: 0, replaced: 0, kept: 0, unchanged: 0 })[what]++;
  }

  /**
   * What happens to one record: `insert` (no match), `same` (match, nothing would change),
   * `update` (overwrite), `keep` (skip, fail, or ambiguous). Conflicts are recorded.
   */
  decide(
    table: string,
    id: string,
    existing: object | undefined,
    desired: Record<string, unknown>,
    ambiguous?: string,
  ): Decision {
    if (ambiguous) {
      this.summary.conflicts.push({ table, id, reason: ambiguous, ambiguous: true });
      this.count(table, 'kept');
      return 'keep';
    }
    if (!existing) {
      this.count(table, 'created');
      return 'insert';
    }
    const stored = new Map<string, unknown>(Object.entries(existing));
    const changed = Object.keys(desired).filter((k) => !sameValue(stored.get(k), desired[k]));
    if (!changed.length) {
      this.count(table, 'unchanged');
      return 'same';
    }
    this.summary.conflicts.push({ table, id, reason: `an existing record differs in ${changed.join(', ')}` });
    if (this.mode === 'overwrite') {
      this.count(table, 'replaced');
      return 'update';
    }
    this.count(table, 'kept');
    return 'keep';
  }

  /** Notes that a record kept out of the restore does not exist here, so its dependents cannot be restored. */
  keptOut(d: Decision, existing: object | undefined, id: string): void {
    if (d === 'keep' && !existing) this.absent.add(id);
  }

  disabled(table: string, id: string): void {
    this.summary.disabled.push({ table, id, reason: SECRET_MISSING });
  }

  skip(table: string, id: string, reason: string): void {
    this.summary.skipped.push({ table, id, reason });
  }

  /**
   * Fills the secrets a backup left out (`omitted`, pointers into `record`) from the stored
   * record. Returns the pointers that nothing stored could fill.
   */
  fillSecrets(
    record: Record<string, unknown>,
    omitted: string[] | undefined,
    stored: Record<string, unknown> | undefined,
  ): string[] {
    const missing: string[] = [];
    for (const p of omitted ?? []) {
      if (stored && hasAt(stored, p)) setAt(record, p, structuredClone(getAt(stored, p)));
      else missing.push(p);
    }
    return missing;
  }

  /** One row, of the type its definition gives it (`StoredRow` when none does). */
  async get<T extends object = StoredRow>(
    sql: string,
    params: Parameters<Queryable['get']>[1],
  ): Promise<T | undefined> {
    return this.q.get<T>(sql, params);
  }
}

/** The fields of `x` that a definition's properties name (a record's settings, a row's columns), in their order. */
export function pickFields<T extends object, P extends Record<string, unknown>>(
  x: T,
  props: P,
): Pick<T, Extract<keyof P, keyof T>> {
  const values = new Map<string, unknown>(Object.entries(x));
  return Object.fromEntries(Object.keys(props).map((k) => [k, values.get(k)])) as Pick<T, Extract<keyof P, keyof T>>;
}

/** Compares a stored column value with a backup value of the type the backup uses. */
export function sameValue(stored: unknown, wanted: unknown): boolean {
  if (wanted === null || wanted === undefined) return stored === null || stored === undefined || stored === 'null';
  if (typeof wanted === 'boolean') return Db.bool(stored) === wanted;
  if (typeof wanted === 'number') return stored !== null && stored !== undefined && Number(stored) === wanted;
  if (typeof wanted === 'object') return canonicalJson(Db.json(stored, null)) === canonicalJson(wanted);
  return stored === wanted;
}

/**
 * Refuses a plan that cannot be applied in its mode: `fail` with any conflict, and any mode but
 * `skip` with an ambiguous record. 409, listing the conflicts.
 */
export function assertApplicable(summary: Summary, mode: ConflictMode): void {
  const blocking =
    mode === 'fail' ? summary.conflicts : mode === 'overwrite' ? summary.conflicts.filter((c) => c.ambiguous) : [];
  if (!blocking.length) return;
  const list = blocking
    .slice(0, 5)
    .map((c) => `${c.table} ${c.id}: ${c.reason}`)
    .join('; ');
  const why =
    mode === 'fail'
      ? `conflict_mode is "fail" and ${blocking.length} existing record(s) would change`
      : `${blocking.length} record(s) match two different existing records, which "overwrite" cannot resolve ` +
        '(use "skip")';
  throw new HttpError(
    409,
    'restore_conflict',
    `The restore was refused: ${why}: ${list}${blocking.length > 5 ? ' …' : ''}.`,
    { errors: blocking.slice(0, 50).map((c) => ({ path: `/configuration/${c.table}/${c.id}`, message: c.reason })) },
  );
}
