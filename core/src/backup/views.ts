/**
 * What the backup routes answer: the stored backup files (`GET, POST /api/backup/files`), the
 * schedule's settings (`GET, PUT /api/backup/scheduled`), a staged restore with the planner's
 * summary and a restart. The planner's `Summary` is the summary's type, and api-types.ts gives the
 * web client these types.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { CONFLICT_MODES } from './planner.ts';
import type { BackupSettingKey } from './settings-rules.ts';

/** A backup file in the backup folder. */
export const BackupFileView = Type.Object({
  filename: Type.String(),
  size_bytes: Type.Integer(),
  created_at: Type.String(),
});
export const BackupFileList = Type.Object({ files: Type.Array(BackupFileView) });
/** `POST /api/backup/files`: the file written, and whether it holds the secrets. */
export const BackupWritten = Type.Object({ ...BackupFileView.properties, secrets_mode: Type.String() });
/** `GET, PUT /api/backup/scheduled`: the settings as stored (text). */
export const Schedule = Type.Object({
  backup_scheduled_enabled: Type.String(),
  backup_scheduled_interval_hours: Type.String(),
  backup_secrets_mode: Type.String(),
  backup_retention_count: Type.String(),
} satisfies Record<BackupSettingKey, TSchema>);

/**
 * What the backup routes answer about a staged restore (`POST /api/backup/prepare-restore`,
 * `GET /api/backup/pending-restore`): the pending file without its backup (staged.ts `pendingView`),
 * with the planner's summary (planner.ts `Summary` is its type). Entries are open objects: a planner
 * that adds a field to one shows it without an edit here.
 */
const ENTRY = { table: Type.String(), id: Type.String(), reason: Type.String() };
const Entry = Type.Object(ENTRY, { additionalProperties: true });
/** A conflict: `ambiguous` when the record matches two different existing ones. */
const ConflictEntry = Type.Object(
  { ...ENTRY, ambiguous: Type.Optional(Type.Boolean()) },
  { additionalProperties: true },
);

export const RestoreSummaryView = Type.Object({
  /** Per table: records created, replaced, kept as they are here, and unchanged. */
  counts: Type.Record(
    Type.String(),
    Type.Object({ created: Type.Integer(), replaced: Type.Integer(), kept: Type.Integer(), unchanged: Type.Integer() }),
  ),
  conflicts: Type.Array(ConflictEntry),
  skipped: Type.Array(Entry),
  /** Records restored disabled (or users inactive) because a secret was not in the backup. */
  disabled: Type.Array(Entry),
  warnings: Type.Array(Type.String()),
});

export const StagedRestoreView = Type.Object({
  state: Type.Literal('staged'),
  staged_at: Type.String(),
  staged_by: Type.String({ description: 'The administrator who staged it' }),
  conflict_mode: Type.Enum([...CONFLICT_MODES]),
  source: Type.Object({ filename: Type.String(), size_bytes: Type.Integer(), sha256: Type.String() }),
  backup: Type.Object({
    format_version: Type.Integer(),
    service_version: Type.String(),
    created_at: Type.String(),
    secrets_mode: Type.String(),
    /** Set when the backup was written by an older version and migrated on reading. */
    migrated_from: Type.Optional(Type.Object({ service_version: Type.String(), format_version: Type.Integer() })),
  }),
  summary: RestoreSummaryView,
});
export type StagedRestore = Static<typeof StagedRestoreView>;

/** `POST /api/backup/apply-restart`. */
export const RestartingView = Type.Object({ state: Type.Literal('restarting') });
