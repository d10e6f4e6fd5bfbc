/**
 * Form fields generated from a plugin's config schema: strings, numbers, booleans, enums, lists
 * of strings, nested objects, key/value maps, and a JSON box for anything else. Secret fields are
 * password inputs that show the mask as a placeholder and keep the stored value when left empty.
 *
 * Every field is checked against its schema as the user leaves it and when the form is submitted
 * (`useFormChecks`), and the service's own field problems land under the field they name; both are
 * said in the user's language from the JSON Schema keyword and its values (`field.*` strings).
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../lib/api.ts';
import { num, t } from '../lib/i18n.ts';
import {
  checkConfig,
  defaults,
  enumValues,
  type FieldIssue,
  fieldKind,
  humanize,
  issueAt,
  isUrlPattern,
  MASK,
  mapValueSchema,
  serverIssues,
} from '../lib/schema.ts';
import type { JsonSchema } from '../lib/types.ts';
import { Field } from './field.tsx';
import { InlineMd } from './inline-md.tsx';
import { severityLabel } from './labels.ts';

const SEVERITIES = ['info', 'warning', 'critical'];
/** An enum value's label: the plugin's, else a severity's name (a map to severities), else the value. */
function optionLabel(s: JsonSchema, v: unknown): string {
  const own = s['x-option-labels']?.[String(v)];
  if (own) return own;
  const all = enumValues(s) ?? [];
  return all.length && all.every((x) => SEVERITIES.includes(String(x))) ? severityLabel(String(v)) : String(v);
}

/** What the fields need to show their problems: the problems by dotted path, and which are shown yet. */
export interface FormChecks {
  issues: Record<string, FieldIssue>;
  visible: (path: string) => boolean;
  touch: (path: string) => void;
  edited: (path: string) => void;
}

/**
 * The checks of one config form. `validate()` (on submit) shows every problem and says whether
 * the form may be sent; `fromServer(err)` places a 422's field problems under their fields and
 * says whether any was placed (the form then needs no other error text).
 */
export function useFormChecks(
  schema: JsonSchema | null | undefined,
  value: Record<string, unknown>,
  secretsSet: string[] = [],
  skip: string[] = [],
  base = 'body/config',
) {
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const [all, setAll] = useState(false);
  const [server, setServer] = useState<Record<string, FieldIssue>>({});
  const local = checkConfig(schema, value, secretsSet, skip);
  const under = (issues: Record<string, FieldIssue>, path: string) =>
    Object.keys(issues).some((p) => p === path || p.startsWith(`${path}.`));
  const checks: FormChecks = {
    issues: { ...server, ...local },
    visible: (path) => all || touched.has(path) || under(server, path),
    touch: (path) => {
      if (!touched.has(path)) setTouched(new Set([...touched, path]));
    },
    edited: (path) => {
      if (!under(server, path)) return;
      setServer(Object.fromEntries(Object.entries(server).filter(([p]) => p !== path && !p.startsWith(`${path}.`))));
    },
  };
  return {
    checks,
    validate: (): boolean => {
      setAll(true);
      return Object.keys(local).length === 0;
    },
    reset: () => {
      setTouched(new Set());
      setAll(false);
      setServer({});
    },
    fromServer: (err: unknown): boolean => {
      if (!(err instanceof ApiError) || err.status !== 422) return false;
      const found = serverIssues(err.errors, base);
      setServer(found);
      return Object.keys(found).length > 0;
    },
  };
}

/** The form-level note when the service's problems were placed under their fields. */
export const FixBelow = () => (
  <div class="note note-danger" role="alert" data-testid="fix-below">
    {t('field.fix_below')}
  </div>
);

const limit = (issue: FieldIssue): number => Number(issue.params.limit ?? 0);

/**
 * One problem in the user's words: the keyword and its values, the field's own hint for a format, or the service's
 * sentence for anything else.
 */
export function issueText(issue: FieldIssue, s?: JsonSchema): string {
  switch (issue.code) {
    case 'required':
      return t('field.required');
    case 'minLength':
      return t('field.min_length', { count: limit(issue) });
    case 'maxLength':
      return t('field.max_length', { count: limit(issue) });
    case 'minItems':
      return t('field.min_items', { count: limit(issue) });
    case 'maxItems':
      return t('field.max_items', { count: limit(issue) });
    case 'minimum':
      return t('field.minimum', { limit: num(limit(issue)) });
    case 'maximum':
      return t('field.maximum', { limit: num(limit(issue)) });
    case 'exclusiveMinimum':
      return t('field.exclusive_minimum', { limit: num(limit(issue)) });
    case 'exclusiveMaximum':
      return t('field.exclusive_maximum', { limit: num(limit(issue)) });
    case 'pattern':
      if (isUrlPattern(issue.params, s)) return t('field.url');
      return s?.description ? t('field.pattern_hint', { hint: s.description }) : t('field.pattern');
    case 'format': {
      const format = String(issue.params.format ?? s?.format ?? '');
      if (format === 'email') return t('field.email');
      if (format === 'uri' || format === 'url') return t('field.url');
      return s?.description ? t('field.pattern_hint', { hint: s.description }) : t('field.pattern');
    }
    case 'type': {
      const type = String(issue.params.type ?? '');
      if (type === 'integer') return t('field.integer');
      if (type === 'number') return t('field.number');
      return t('field.type');
    }
    case 'enum': {
      const values = (issue.params.allowedValues as unknown[] | undefined) ?? enumValues(s ?? {}) ?? [];
      return t('field.enum', {
        values: values.map((v) => optionLabel(s ?? {}, v)).join(', '),
      });
    }
    case 'additionalProperties':
      return t('field.unknown');
    case 'url_credentials':
      return t('field.url_credentials');
    default:
      return issue.message || t('field.invalid');
  }
}

export interface SchemaFormProps {
  schema: JsonSchema;
  value: Record<string, unknown>;
  onChange: (v: Record<string, unknown>) => void;
  /** Secret paths the service says hold a value. */
  secretsSet?: string[];
  /** Top-level keys rendered elsewhere (e.g. auth_mode). */
  skip?: string[];
  /** Choices for a `bot_id` field. */
  bots?: { id: string; name: string }[];
  /** The form's checks (`useFormChecks`); without them the fields show no problems. */
  checks?: FormChecks;
  prefix?: string;
}

export function SchemaForm({
  schema,
  value,
  onChange,
  secretsSet = [],
  skip = [],
  bots,
  checks,
  prefix = '',
}: SchemaFormProps) {
  const props = Object.entries(schema.properties ?? {}).filter(([k]) => !skip.includes(k));
  if (!props.length) return null;
  return (
    <div class="schema-form">
      {props.map(([key, s]) => {
        const path = prefix ? `${prefix}.${key}` : key;
        return (
          <SchemaField
            key={key}
            name={key}
            schema={s}
            required={schema.required?.includes(key) ?? false}
            value={value[key]}
            path={path}
            secretsSet={secretsSet}
            bots={bots}
            checks={checks}
            onChange={(v) => {
              checks?.edited(path);
              onChange({ ...value, [key]: v });
            }}
          />
        );
      })}
    </div>
  );
}

interface FieldProps {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  path: string;
  secretsSet: string[];
  bots?: { id: string; name: string }[];
  checks?: FormChecks;
  onChange: (v: unknown) => void;
}

function SchemaField({ name, schema: s, required, value, path, secretsSet, bots, checks, onChange }: FieldProps) {
  const label = s.title ?? humanize(name);
  const hint = s.description;
  const kind = fieldKind(s);
  const testId = `cfg-${path}`;
  const issue = checks && checks.visible(path) ? issueAt(checks.issues, path) : undefined;
  const error = issue
    ? issueText(
        issue,
        kind === 'map'
          ? (mapValueSchema(s) ?? s)
          : s.items && kind === 'string-list' && issue.code === 'pattern'
            ? s.items
            : s,
      )
    : null;
  const touch = () => checks?.touch(path);

  if (kind === 'object') {
    return (
      <fieldset class="subform">
        <legend>{label}</legend>
        {hint && (
          <p class="hint">
            <InlineMd text={hint} />
          </p>
        )}
        <SchemaForm
          schema={s}
          value={(value as Record<string, unknown>) ?? defaults(s)}
          onChange={onChange}
          secretsSet={secretsSet}
          prefix={path}
          bots={bots}
          checks={checks}
        />
      </fieldset>
    );
  }
  if (kind === 'boolean') {
    return (
      <label class="check">
        <input
          type="checkbox"
          checked={Boolean(value)}
          onChange={(e) => onChange(e.currentTarget.checked)}
          data-testid={testId}
        />
        <span>
          {label}
          {hint && (
            <small class="hint">
              <InlineMd text={hint} />
            </small>
          )}
          {error && (
            <small class="hint hint-danger field-error" data-testid="field-error">
              {error}
            </small>
          )}
        </span>
      </label>
    );
  }
  if (kind === 'map') {
    return (
      <fieldset class="subform" data-testid={testId}>
        <legend>
          {label}
          {required && (
            <span class="req" aria-hidden="true">
              {' '}
              *
            </span>
          )}
        </legend>
        {hint && (
          <p class="hint">
            <InlineMd text={hint} />
          </p>
        )}
        <MapInput
          value={(value as Record<string, unknown>) ?? {}}
          valueSchema={mapValueSchema(s)!}
          label={label}
          onChange={onChange}
          onBlur={touch}
          testId={testId}
        />
        {error && (
          <small class="hint hint-danger field-error" role="alert" data-testid="field-error">
            {error}
          </small>
        )}
      </fieldset>
    );
  }

  let control;
  if (name === 'bot_id' && bots) {
    control = (
      <select
        required={required}
        value={String(value ?? '')}
        onChange={(e) => onChange(e.currentTarget.value)}
        onBlur={touch}
        data-testid={testId}
      >
        <option value="">{t('common.choose')}</option>
        {bots.map((b) => (
          <option key={b.id} value={b.id}>
            {b.name}
          </option>
        ))}
      </select>
    );
  } else if (kind === 'enum') {
    const values = enumValues(s)!;
    control = (
      <select
        required={required}
        value={value === undefined ? '' : String(value)}
        data-testid={testId}
        onBlur={touch}
        onChange={(e) => {
          const i = e.currentTarget.selectedIndex - 1;
          onChange(i >= 0 ? values[i] : undefined);
        }}
      >
        <option value="">{t('common.choose')}</option>
        {values.map((v) => (
          <option key={String(v)} value={String(v)}>
            {optionLabel(s, v)}
          </option>
        ))}
      </select>
    );
  } else if (kind === 'integer' || kind === 'number') {
    control = (
      <input
        type="number"
        required={required}
        min={s.minimum}
        max={s.maximum}
        step={kind === 'integer' ? 1 : 'any'}
        data-testid={testId}
        onBlur={touch}
        value={value === undefined || value === null ? '' : String(value)}
        onInput={(e) => {
          const raw = e.currentTarget.value;
          onChange(raw === '' ? undefined : Number(raw));
        }}
      />
    );
  } else if (kind === 'string-list') {
    control = (
      <textarea
        rows={3}
        required={required && (s as { minItems?: number }).minItems !== undefined}
        data-testid={testId}
        onBlur={touch}
        value={Array.isArray(value) ? value.join('\n') : ''}
        onInput={(e) => onChange(e.currentTarget.value.split('\n'))}
      />
    );
  } else if (kind === 'json') {
    control = <JsonInput value={value} onChange={onChange} testId={testId} />;
  } else if (s['x-secret']) {
    const stored = secretsSet.includes(path);
    control = (
      <input
        type="password"
        autocomplete="new-password"
        required={required && !stored}
        data-testid={testId}
        onBlur={touch}
        placeholder={stored ? MASK : ''}
        value={value === MASK ? '' : String(value ?? '')}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  } else if (kind === 'text') {
    control = (
      <textarea
        rows={4}
        required={required}
        data-testid={testId}
        onBlur={touch}
        value={String(value ?? '')}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  } else {
    control = (
      <input
        type="text"
        required={required}
        maxLength={s.maxLength}
        data-testid={testId}
        onBlur={touch}
        value={String(value ?? '')}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  }
  return (
    <Field
      label={
        <>
          {label}
          {required && (
            <span class="req" aria-hidden="true">
              {' '}
              *
            </span>
          )}
        </>
      }
      error={error}
      hints={[
        kind === 'string-list' && t('form.one_per_line'),
        s['x-secret'] && secretsSet.includes(path) && t('form.secret_kept'),
        hint,
      ]}
    >
      {control}
    </Field>
  );
}

type Row = { key: string; value: unknown };

/**
 * A key/value map (`Type.Record`) edited as rows: a key and a value typed by the map's value
 * schema (a choice for an enum). Rows with an empty key are kept while editing and left out of the value.
 */
function MapInput({
  value,
  valueSchema: vs,
  label,
  onChange,
  onBlur,
  testId,
}: {
  value: Record<string, unknown>;
  valueSchema: JsonSchema;
  label: string;
  onChange: (v: Record<string, unknown>) => void;
  onBlur: () => void;
  testId: string;
}) {
  const [rows, setRows] = useState<Row[]>(() => Object.entries(value).map(([key, v]) => ({ key, value: v })));
  const values = enumValues(vs);
  const kind = fieldKind(vs);
  const update = (next: Row[]) => {
    setRows(next);
    const out: Record<string, unknown> = {};
    for (const r of next)
      if (r.key.trim() && r.value !== undefined && r.value !== '' && !(r.key.trim() in out))
        out[r.key.trim()] = r.value;
    onChange(out);
  };
  const set = (i: number, patch: Partial<Row>) => update(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const taken = (i: number) =>
    rows.some((r, j) => j < i && r.key.trim() !== '' && r.key.trim() === rows[i]!.key.trim());
  return (
    <div class="kv" onFocusOut={onBlur}>
      {!rows.length && <p class="muted small">{t('form.map_empty')}</p>}
      {rows.map((r, i) => (
        <div class="kv-row" key={i} data-testid={`${testId}-row`}>
          <label class="field">
            <span class="field-label">{t('form.map_key')}</span>
            <input
              type="text"
              value={r.key}
              aria-invalid={taken(i) ? 'true' : undefined}
              data-testid={`${testId}-key`}
              onInput={(e) => set(i, { key: e.currentTarget.value })}
            />
            {taken(i) && <small class="hint hint-danger">{t('form.map_duplicate')}</small>}
          </label>
          <label class="field">
            <span class="field-label">{t('form.map_value')}</span>
            {values ? (
              <select
                value={r.value === undefined ? '' : String(r.value)}
                data-testid={`${testId}-value`}
                onChange={(e) => {
                  const k = e.currentTarget.selectedIndex - 1;
                  set(i, { value: k >= 0 ? values[k] : undefined });
                }}
              >
                <option value="">{t('common.choose')}</option>
                {values.map((v) => (
                  <option key={String(v)} value={String(v)}>
                    {optionLabel(vs, v)}
                  </option>
                ))}
              </select>
            ) : kind === 'boolean' ? (
              <input
                type="checkbox"
                checked={Boolean(r.value)}
                data-testid={`${testId}-value`}
                onChange={(e) => set(i, { value: e.currentTarget.checked })}
              />
            ) : kind === 'integer' || kind === 'number' ? (
              <input
                type="number"
                step={kind === 'integer' ? 1 : 'any'}
                value={r.value === undefined ? '' : String(r.value)}
                data-testid={`${testId}-value`}
                onInput={(e) => {
                  const raw = e.currentTarget.value;
                  set(i, { value: raw === '' ? undefined : Number(raw) });
                }}
              />
            ) : (
              <input
                type="text"
                value={String(r.value ?? '')}
                data-testid={`${testId}-value`}
                onInput={(e) => set(i, { value: e.currentTarget.value })}
              />
            )}
          </label>
          <button
            type="button"
            class="btn btn-ghost btn-sm kv-remove"
            aria-label={t('form.map_remove_row', { key: r.key || label })}
            data-testid={`${testId}-remove`}
            onClick={() => update(rows.filter((_, j) => j !== i))}
          >
            {t('form.map_remove')}
          </button>
        </div>
      ))}
      <div>
        <button
          type="button"
          class="btn btn-sm"
          data-testid={`${testId}-add`}
          onClick={() => setRows([...rows, { key: '', value: undefined }])}
        >
          {t('form.map_add')}
        </button>
      </div>
    </div>
  );
}

/** A JSON value edited as text; parsed on every change, flagged while it does not parse. */
function JsonInput({
  value,
  onChange,
  testId,
  id,
  'aria-describedby': describedBy,
}: {
  value: unknown;
  onChange: (v: unknown) => void;
  testId: string;
  id?: string;
  'aria-describedby'?: string;
}) {
  const [text, setText] = useState(() => (value === undefined ? '' : JSON.stringify(value, null, 2)));
  const [bad, setBad] = useState(false);
  return (
    <>
      <textarea
        id={id}
        aria-describedby={describedBy}
        rows={4}
        class="mono"
        value={text}
        aria-invalid={bad}
        data-testid={testId}
        onInput={(e) => {
          const raw = e.currentTarget.value;
          setText(raw);
          if (!raw.trim()) {
            setBad(false);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(raw));
            setBad(false);
          } catch {
            setBad(true);
          }
        }}
      />
      {bad && <small class="hint hint-danger">{t('form.json_invalid')}</small>}
    </>
  );
}
