/**
 * The backup envelope: building it (with the checksum over the canonical JSON of the
 * configuration) and reading one back: limits first, then format and service version, then the
 * checksum, then the schema. Every refusal is an `HttpError` (422) whose detail says why.
 */
import crypto from 'node:crypto';
import { HttpError } from '../http/problem.ts';
import { BACKUP_LIMITS, JsonGuardError, type JsonLimits, parseGuarded } from './json-guard.ts';
import {
  type ConfigurationT,
  checkEnvelope,
  type EnvelopeT,
  FORMAT,
  FORMAT_VERSION,
  type SecretsModeT,
} from './schema.ts';

/**
 * JSON with object keys sorted at every level and no whitespace: the same configuration always
 * gives the same text, whatever order its keys were written in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** `sha256:<hex>` of the canonical JSON of a configuration. */
export function checksumOf(configuration: unknown): string {
  return `sha256:${crypto.createHash('sha256').update(canonicalJson(configuration), 'utf8').digest('hex')}`;
}

export interface BuildOptions {
  serviceVersion: string;
  createdAt: Date;
  secretsMode: SecretsModeT;
  trigger: 'manual' | 'scheduled';
}

/** A complete envelope. Key order is fixed so the header (with `trigger`) sits at the start of the file. */
export function buildEnvelope(configuration: ConfigurationT, o: BuildOptions): EnvelopeT {
  return {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    service_version: o.serviceVersion,
    created_at: o.createdAt.toISOString(),
    trigger: o.trigger,
    secrets_mode: o.secretsMode,
    checksum: checksumOf(configuration),
    configuration,
  };
}

const invalid = (code: string, detail: string, errors?: { path: string; message: string }[]) =>
  new HttpError(422, code, detail, { errors });

/** Upgrades an envelope of format version N to N+1. Format 1 is the first; add steps here as the format grows. */
const UPGRADES: Record<number, (e: Record<string, unknown>) => Record<string, unknown>> = {};

/** major.minor.patch as numbers (pre-release and build parts ignored); undefined when unreadable. */
export function parseVersion(v: string): [number, number, number] | undefined {
  const m = /^(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+].*)?$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

export interface ReadEnvelope {
  envelope: EnvelopeT;
  /** Set when the envelope was written by another service version or an older format. */
  migratedFrom?: { service_version: string; format_version: number };
}

/**
 * Reads raw backup text: JSON limits and forbidden keys (before parsing), format, format version,
 * service version, checksum, schema. Throws a 422 HttpError naming the problem.
 */
export function readEnvelope(text: string, serviceVersion: string, limits: JsonLimits = BACKUP_LIMITS): ReadEnvelope {
  let parsed: unknown;
  try {
    parsed = parseGuarded(text, limits);
  } catch (err) {
    if (err instanceof JsonGuardError) {
      const code =
        err.reason === 'syntax'
          ? 'invalid_json'
          : err.reason === 'forbidden_key'
            ? 'forbidden_key'
            : 'json_limits_exceeded';
      throw invalid(code, `The backup file was refused: ${err.message}.`);
    }
    throw invalid('invalid_json', 'The backup file is not valid JSON.');
  }
  return checkParsed(parsed, serviceVersion);
}

/** The checks after parsing (also used for the staged file, which holds the envelope already parsed). */
export function checkParsed(parsed: unknown, serviceVersion: string): ReadEnvelope {
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid('invalid_backup', 'The backup file is not a JSON object.');
  let e = parsed as Record<string, unknown>;
  if (e.format !== FORMAT)
    throw invalid('invalid_backup', `The file is not a Herald configuration backup (its "format" is not "${FORMAT}").`);
  const fv = e.format_version;
  if (typeof fv !== 'number' || !Number.isInteger(fv) || fv < 1 || fv > FORMAT_VERSION) {
    throw invalid(
      'unknown_format_version',
      `The backup has format version ${JSON.stringify(fv)}; this Herald reads format versions 1 to ` +
        `${FORMAT_VERSION}. Restore it with the Herald version that wrote it, or a newer one.`,
    );
  }
  const sv = typeof e.service_version === 'string' ? e.service_version : '';
  const theirs = parseVersion(sv);
  const ours = parseVersion(serviceVersion);
  if (!theirs)
    throw invalid(
      'invalid_backup',
      `The backup's service_version ${JSON.stringify(e.service_version)} is not a version number.`,
    );
  if (ours && compareVersions(theirs, ours) > 0) {
    throw invalid(
      'newer_service_version',
      `The backup was written by Herald ${sv}, which is newer than this Herald (${serviceVersion}); ` +
        'upgrade Herald before restoring it.',
    );
  }
  // The checksum covers the configuration as written, so it is checked before any upgrade touches it.
  if (typeof e.checksum !== 'string' || !e.configuration || checksumOf(e.configuration) !== e.checksum) {
    throw invalid(
      'checksum_mismatch',
      'The backup checksum does not match its configuration; the file is damaged or was edited.',
    );
  }
  let migrated: ReadEnvelope['migratedFrom'];
  if (fv < FORMAT_VERSION || (ours && compareVersions(theirs, ours) < 0))
    migrated = { service_version: sv, format_version: fv };
  for (let v = fv; v < FORMAT_VERSION; v++) {
    const step = UPGRADES[v];
    if (!step)
      throw invalid('unknown_format_version', `Backups of format version ${v} cannot be upgraded by this Herald.`);
    e = step(e);
    e.format_version = v + 1;
    e.checksum = checksumOf(e.configuration);
  }
  if (!checkEnvelope.Check(e)) {
    const errors = [...checkEnvelope.Errors(e)]
      .slice(0, 20)
      .map((x) => ({
        path: x.instancePath || '/',
        message:
          x.keyword === 'required'
            ? `is missing ${(x.params as { requiredProperties?: string[] }).requiredProperties?.join(', ')}`
            : x.keyword === 'additionalProperties'
              ? 'has fields that do not belong: ' +
                `${(x.params as { additionalProperties?: string[] }).additionalProperties?.join(', ')}`
              : x.message,
      }))
      .filter((x) => !/schema is false/.test(x.message));
    throw invalid(
      'invalid_backup',
      `The backup does not have the expected shape: ${errors
        .slice(0, 5)
        .map((x) => `${x.path} ${x.message}`)
        .join('; ')}.`,
      errors,
    );
  }
  return { envelope: e as EnvelopeT, migratedFrom: migrated };
}
