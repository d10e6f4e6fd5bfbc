/** A time-zone select over the runtime's IANA zones, the browser's zone first. */
import { useMemo } from 'preact/hooks';

export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function zones(): string[] {
  let list: string[] = [];
  try {
    list = Intl.supportedValuesOf('timeZone');
  } catch {
    /* old runtime */
  }
  if (!list.includes('UTC')) list = ['UTC', ...list];
  return list;
}

export function TimeZoneSelect({
  value,
  onChange,
  id,
  testId,
}: {
  value: string;
  onChange: (z: string) => void;
  id?: string;
  testId?: string;
}) {
  const list = useMemo(zones, []);
  const all = list.includes(value) ? list : [value, ...list];
  return (
    <select
      id={id}
      value={value}
      onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      data-testid={testId}
    >
      {all.map((z) => (
        <option key={z} value={z}>
          {z.replaceAll('_', ' ')}
        </option>
      ))}
    </select>
  );
}
