/** `GET /api/v1/storage`: what a user's documents, memory entries and reports take against their limit (storage.ts). */
import Type, { type Static } from 'typebox';

export const StorageView = Type.Object({
  used_bytes: Type.Integer({
    description:
      'Bytes counted against the limit: documents (name, text and its search chunks), memory entries ' +
      '(content and category), report PDFs',
  }),
  limit_bytes: Type.Integer(),
  limit_mb: Type.Integer({ description: 'The limit in MB of 1,000,000 bytes' }),
  custom_limit: Type.Boolean({
    description: "True when an administrator set this user's own limit, false when it is SERVICE_USER_STORAGE_MB",
  }),
  exceeded: Type.Boolean({ description: 'True when nothing more can be stored' }),
  documents_bytes: Type.Integer(),
  memory_bytes: Type.Integer(),
  reports_bytes: Type.Integer(),
});
export type Storage = Static<typeof StorageView>;
