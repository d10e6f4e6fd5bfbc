/**
 * The web client's source of the backup routes' shapes: type-only exports of their response
 * schemas (views.ts), so that the backups page reads what the server declares. Keep the names
 * stable; add, do not rename.
 */
import type { Static } from 'typebox';
import type {
  BackupFileList,
  BackupFileView,
  BackupWritten as BackupWrittenSchema,
  RestoreSummaryView,
  Schedule,
  StagedRestoreView,
} from './views.ts';

/** One stored backup file (`GET /api/backup/files`'s `files`). */
export type BackupFile = Static<typeof BackupFileView>;
export type BackupFiles = Static<typeof BackupFileList>;
/** `POST /api/backup/files`. */
export type BackupWritten = Static<typeof BackupWrittenSchema>;
/** `GET, PUT /api/backup/scheduled`. */
export type BackupSchedule = Static<typeof Schedule>;
/** A staged restore's plan summary. */
export type RestoreSummary = Static<typeof RestoreSummaryView>;
/** `GET /api/backup/pending-restore`, `POST /api/backup/prepare-restore`. */
export type StagedRestore = Static<typeof StagedRestoreView>;
