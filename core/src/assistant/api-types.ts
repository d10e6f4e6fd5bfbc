/**
 * The web client's source of the assistant's API shapes: type-only exports of the response schemas
 * the routes declare (`core/web/src/lib/types.ts` re-exports them), so that the client reads what
 * the server serializes. Each comes from a module under definitions/ that imports nothing but
 * TypeBox and small helpers. Keep the names stable; add, do not rename.
 */
import type { Static } from 'typebox';
import type { PersonalContextView, PrimaryContextView } from './definitions/context.ts';
import type { DocumentList, DocumentView, DocumentWithText } from './definitions/document.ts';
import type { MemoryEntryList, MemoryEntryView } from './definitions/memory-entry.ts';
import type { AdminModelsView, ModelsView } from './definitions/models.ts';
import type { ReportList, ReportView } from './definitions/report.ts';
import type { SearchHitView, SearchResults as SearchResultsSchema } from './definitions/search.ts';
import type { SkillList, SkillScope as SkillScopeSchema, SkillView } from './definitions/skill.ts';
import type { StorageView } from './definitions/storage.ts';
import type { ToolCallOutcomeView } from './definitions/tool-call.ts';
import type { AdminUsageView, QuotaView } from './definitions/usage.ts';

export type SkillScope = Static<typeof SkillScopeSchema>;
/** `GET /api/v1/skills/{id}`, `/api/v1/admin/skills/{id}`; the lists' `skills`. */
export type Skill = Static<typeof SkillView>;
export type Skills = Static<typeof SkillList>;
/** `GET /api/v1/memory/{id}`; the list's `entries`. */
export type MemoryEntry = Static<typeof MemoryEntryView>;
export type MemoryEntries = Static<typeof MemoryEntryList>;
/** `GET /api/v1/documents`'s `documents` (with `excerpt` when searched). */
export type Doc = Static<typeof DocumentView>;
export type Docs = Static<typeof DocumentList>;
/** `GET /api/v1/documents/{id}`: the document with its extracted text. */
export type DocWithText = Static<typeof DocumentWithText>;
/** `GET /api/v1/storage`. */
export type Storage = Static<typeof StorageView>;
/** `GET /api/v1/reports/{id}`; the list's `reports`. */
export type Report = Static<typeof ReportView>;
export type Reports = Static<typeof ReportList>;
/** `GET /api/v1/models`. */
export type Models = Static<typeof ModelsView>;
/** `GET, PUT /api/v1/admin/models`. */
export type AdminModels = Static<typeof AdminModelsView>;
/** `GET /api/v1/chats/quota`. */
export type Quota = Static<typeof QuotaView>;
/** `GET /api/v1/admin/usage`: one day's use. */
export type AdminUsage = Static<typeof AdminUsageView>;
export type UsageDay = AdminUsage;
/** `GET, PUT /api/v1/admin/context`. */
export type PrimaryContext = Static<typeof PrimaryContextView>;
/** `GET, PUT /api/v1/users/me/context`. */
export type PersonalContext = Static<typeof PersonalContextView>;
/** `GET /api/v1/search`. */
export type SearchHit = Static<typeof SearchHitView>;
export type SearchResults = Static<typeof SearchResultsSchema>;
/** `POST /api/v1/chats/{chat_id}/tool-calls/{id}`: how the user's decision on a proposal went. */
export type ToolCallOutcome = Static<typeof ToolCallOutcomeView>;
