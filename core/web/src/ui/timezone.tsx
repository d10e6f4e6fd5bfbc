/**
 * A time-zone select over the runtime's IANA zones, named in the interface language ("Германия —
 * Германия (GMT+1)", "New York (GMT-5)") and ordered by offset, the
 * browser's zone first. Zones the runtime still lists under a former name are offered under the
 * current one (Europe/Kyiv, Asia/Kolkata); the IANA id stays in each option's tooltip.
 */
import { useMemo } from 'preact/hooks';
import { locale } from '../lib/i18n.ts';

export const browserZone = (): string => current(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');

/** Former IANA names some runtimes list, and the names they go by now. */
const RENAMED: Record<string, string> = {
  'Europe/Kiev': 'Europe/Kyiv',
  'Europe/Uzhgorod': 'Europe/Kyiv',
  'Europe/Zaporozhye': 'Europe/Kyiv',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Ulan_Bator': 'Asia/Ulaanbaatar',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'America/Godthab': 'America/Nuuk',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Africa/Asmera': 'Africa/Asmara',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Mendoza': 'America/Argentina/Mendoza',
};

const accepted = (z: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: z });
    return true;
  } catch {
    return false;
  }
};

/** The zone's current IANA name when the runtime knows it, else the name as given. */
function current(z: string): string {
  const now = RENAMED[z];
  return now && accepted(now) ? now : z;
}

function zones(): string[] {
  let list: string[] = [];
  try {
    list = Intl.supportedValuesOf('timeZone');
  } catch {
    /* old runtime */
  }
  list = [...new Set(list.map(current))];
  if (!list.includes('UTC')) list = ['UTC', ...list];
  return list;
}

interface Zone {
  id: string;
  label: string;
  offset: number;
}

const CYRILLIC = /[а-яё]/i;

/**
 * Each zone's name in `lang` and its offset now, in minutes east of UTC. In Russian the name is
 * the country or city as the runtime's data spells it in Russian, else the region ("Восточная
 * Америка"); zones that share a region name and both offsets of the year are one choice then.
 */
function describe(ids: string[], lang: string): Zone[] {
  const tag = lang === 'ru' ? 'ru-RU' : 'en-GB';
  const now = new Date();
  const year = now.getUTCFullYear();
  const jan = new Date(Date.UTC(year, 0, 15));
  const jul = new Date(Date.UTC(year, 6, 15));
  const part = (id: string, style: Intl.DateTimeFormatOptions['timeZoneName'], at = now): string => {
    try {
      return (
        new Intl.DateTimeFormat(tag, { timeZone: id, timeZoneName: style })
          .formatToParts(at)
          .find((p) => p.type === 'timeZoneName')?.value ?? ''
      );
    } catch {
      return '';
    }
  };
  const seen = new Set<string>();
  const out: Zone[] = [];
  for (const id of ids) {
    const gmt = part(id, 'shortOffset') || 'GMT';
    const m = /([+-])(\d+)(?::(\d+))?/.exec(gmt);
    const offset = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : 0;
    if (id === 'UTC' || id.startsWith('Etc/')) {
      out.push({ id, label: id === 'UTC' ? 'UTC' : gmt, offset });
      continue;
    }
    let where: string;
    if (lang === 'en') where = (id.split('/').pop() ?? id).replaceAll('_', ' ');
    else {
      const place = part(id, 'shortGeneric');
      where = CYRILLIC.test(place)
        ? place
        : part(id, 'longGeneric')
            .replace(/,? стандартное время$/i, '')
            .replace(/\s*\([^)]*[A-Za-z][^)]*\)/g, '');
      if (!CYRILLIC.test(where)) where = gmt;
      const key = `${where}|${part(id, 'shortOffset', jan)}|${part(id, 'shortOffset', jul)}`;
      if (!CYRILLIC.test(place) && ids.length > 1) {
        if (seen.has(key)) continue;
        seen.add(key);
      }
    }
    out.push({ id, label: where === gmt ? gmt : `${where} (${gmt})`, offset });
  }
  return out;
}

/** A zone's name in the interface language ("Украина (GMT+2)"), for showing a saved zone. */
export const zoneName = (id: string): string => describe([id], locale())[0]?.label ?? id;

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
  const lang = locale();
  const list = useMemo(() => {
    const mine = browserZone();
    // The browser's zone first, so that it survives the merging of equivalent zones.
    const ids = [mine, ...zones().filter((z) => z !== mine)];
    const all = describe(ids, lang).sort((a, b) => a.offset - b.offset || a.label.localeCompare(b.label, lang));
    const first = all.find((z) => z.id === mine);
    return first ? [first, ...all.filter((z) => z !== first)] : all;
  }, [lang]);
  const all = list.some((z) => z.id === value) ? list : [...describe([value], lang), ...list];
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)} data-testid={testId}>
      {all.map((z) => (
        <option key={z.id} value={z.id} title={z.id}>
          {z.label}
        </option>
      ))}
    </select>
  );
}
