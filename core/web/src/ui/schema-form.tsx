/**
 * Form fields generated from a plugin's config schema: strings, numbers, booleans, enums, lists
 * of strings, nested objects, and a JSON box for anything else. Secret fields are password
 * inputs that show the mask as a placeholder and keep the stored value when left empty.
 */
import { useState } from 'preact/hooks';
import { t } from '../lib/i18n.ts';
import { defaults, enumValues, fieldKind, humanize, MASK } from '../lib/schema.ts';
import type { JsonSchema } from '../lib/types.ts';
import { Field } from './field.tsx';

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
  prefix?: string;
}

export function SchemaForm({ schema, value, onChange, secretsSet = [], skip = [], bots, prefix = '' }: SchemaFormProps) {
  const props = Object.entries(schema.properties ?? {}).filter(([k]) => !skip.includes(k));
  if (!props.length) return null;
  return (
    <div class="schema-form">
      {props.map(([key, s]) => (
        <SchemaField key={key} name={key} schema={s} required={schema.required?.includes(key) ?? false} value={value[key]}
          path={prefix ? `${prefix}.${key}` : key} secretsSet={secretsSet} bots={bots}
          onChange={(v) => onChange({ ...value, [key]: v })} />
      ))}
    </div>
  );
}

interface FieldProps { name: string; schema: JsonSchema; required: boolean; value: unknown; path: string; secretsSet: string[]; bots?: { id: string; name: string }[]; onChange: (v: unknown) => void }

function SchemaField({ name, schema: s, required, value, path, secretsSet, bots, onChange }: FieldProps) {
  const label = s.title ?? humanize(name);
  const hint = s.description;
  const kind = fieldKind(s);
  const testId = `cfg-${path}`;

  if (kind === 'object') {
    return (
      <fieldset class="subform">
        <legend>{label}</legend>
        {hint && <p class="hint">{hint}</p>}
        <SchemaForm schema={s} value={(value as Record<string, unknown>) ?? defaults(s)} onChange={onChange} secretsSet={secretsSet} prefix={path} bots={bots} />
      </fieldset>
    );
  }
  if (kind === 'boolean') {
    return (
      <label class="check">
        <input type="checkbox" checked={Boolean(value)} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} data-testid={testId} />
        <span>{label}{hint && <small class="hint">{hint}</small>}</span>
      </label>
    );
  }

  let control;
  if (name === 'bot_id' && bots) {
    control = (
      <select required={required} value={String(value ?? '')} onChange={(e) => onChange((e.target as HTMLSelectElement).value)} data-testid={testId}>
        <option value="">{t('common.choose')}</option>
        {bots.map((b) => <option key={b.id} value={b.id}>{b.name}</option>)}
      </select>
    );
  } else if (kind === 'enum') {
    const values = enumValues(s)!;
    control = (
      <select required={required} value={value === undefined ? '' : String(value)} data-testid={testId}
        onChange={(e) => { const i = (e.target as HTMLSelectElement).selectedIndex - 1; onChange(i >= 0 ? values[i] : undefined); }}>
        <option value="">{t('common.choose')}</option>
        {values.map((v) => <option key={String(v)} value={String(v)}>{s['x-option-labels']?.[String(v)] ?? String(v)}</option>)}
      </select>
    );
  } else if (kind === 'integer' || kind === 'number') {
    control = (
      <input type="number" required={required} min={s.minimum} max={s.maximum} step={kind === 'integer' ? 1 : 'any'} data-testid={testId}
        value={value === undefined || value === null ? '' : String(value)}
        onInput={(e) => { const raw = (e.target as HTMLInputElement).value; onChange(raw === '' ? undefined : Number(raw)); }} />
    );
  } else if (kind === 'string-list') {
    control = (
      <textarea rows={3} required={required && (s as { minItems?: number }).minItems !== undefined} data-testid={testId}
        value={Array.isArray(value) ? value.join('\n') : ''} onInput={(e) => onChange((e.target as HTMLTextAreaElement).value.split('\n'))} />
    );
  } else if (kind === 'json') {
    control = <JsonInput value={value} onChange={onChange} testId={testId} />;
  } else if (s['x-secret']) {
    const stored = secretsSet.includes(path);
    control = (
      <input type="password" autocomplete="new-password" required={required && !stored} data-testid={testId}
        placeholder={stored ? MASK : ''} value={value === MASK ? '' : String(value ?? '')}
        onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
    );
  } else if (kind === 'text') {
    control = <textarea rows={4} required={required} data-testid={testId} value={String(value ?? '')} onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)} />;
  } else {
    control = (
      <input type="text" required={required} minLength={s.minLength} maxLength={s.maxLength} data-testid={testId}
        value={String(value ?? '')} onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
    );
  }
  return (
    <Field label={<>{label}{required && <span class="req" aria-hidden="true"> *</span>}</>}
      hints={[kind === 'string-list' && t('form.one_per_line'), s['x-secret'] && secretsSet.includes(path) && t('form.secret_kept'), hint]}>
      {control}
    </Field>
  );
}

/** A JSON value edited as text; parsed on every change, flagged while it does not parse. */
function JsonInput({ value, onChange, testId, id, 'aria-describedby': describedBy }: { value: unknown; onChange: (v: unknown) => void; testId: string; id?: string; 'aria-describedby'?: string }) {
  const [text, setText] = useState(() => (value === undefined ? '' : JSON.stringify(value, null, 2)));
  const [bad, setBad] = useState(false);
  return (
    <>
      <textarea id={id} aria-describedby={describedBy} rows={4} class="mono" value={text} aria-invalid={bad} data-testid={testId} onInput={(e) => {
        const raw = (e.target as HTMLTextAreaElement).value;
        setText(raw);
        if (!raw.trim()) { setBad(false); onChange(undefined); return; }
        try { onChange(JSON.parse(raw)); setBad(false); } catch { setBad(true); }
      }} />
      {bad && <small class="hint hint-danger">{t('form.json_invalid')}</small>}
    </>
  );
}
