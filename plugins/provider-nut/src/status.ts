/**
 * UPS state as Herald tracks it, and the events a new reading causes relative to the last one.
 * `ups.status` is a space-separated list of flags: OL on line, OB on battery, LB low battery,
 * RB replace battery, CHRG charging, DISCHRG discharging, and others (BYPASS, OVER, TRIM, BOOST, FSD…).
 */

/** One reading of the UPS. */
export interface UpsReading {
  status: string;
  flags: string[];
  charge?: number;
  runtimeSeconds?: number;
}

/** What Herald remembers between polls (in the instance store). */
export interface UpsBaseline {
  /** On battery since the last time the UPS was seen on line power (stays set through OFF/FSD). */
  onBattery: boolean;
  onBatterySince?: string;
  low: boolean;
  replace: boolean;
  status: string;
}

/** Charge must climb this many points above the threshold to re-arm the low-battery alert. */
const LOW_HYSTERESIS = 5;

const num = (v: string | undefined): number | undefined => {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

/** Builds a reading from LIST VAR output; undefined when `ups.status` is missing. */
export function readingFrom(vars: Map<string, string>): UpsReading | undefined {
  const status = vars.get('ups.status');
  if (status === undefined) return undefined;
  return {
    status: status.trim(),
    flags: status
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((f) => f.toUpperCase()),
    charge: num(vars.get('battery.charge')),
    runtimeSeconds: num(vars.get('battery.runtime')),
  };
}

/** Low battery: the UPS says LB, or the charge is under the threshold (with hysteresis once low). */
export function isLow(r: UpsReading, thresholdPercent: number, wasLow: boolean): boolean {
  if (r.flags.includes('LB')) return true;
  if (r.charge === undefined) return false;
  return r.charge < thresholdPercent + (wasLow ? LOW_HYSTERESIS : 0);
}

/** The baseline the first successful poll stores silently. */
export function seedBaseline(r: UpsReading, thresholdPercent: number, now: Date): UpsBaseline {
  const onBattery = r.flags.includes('OB');
  return {
    onBattery,
    ...(onBattery ? { onBatterySince: now.toISOString() } : {}),
    low: isLow(r, thresholdPercent, false),
    replace: r.flags.includes('RB'),
    status: r.status,
  };
}

export type UpsEventType = 'ups_on_battery' | 'ups_online' | 'ups_low_battery' | 'ups_battery_replace';

export interface Transition {
  type: UpsEventType;
  /** Extra payload fields of this event type. */
  extra: Record<string, unknown>;
}

/** Compares a reading with the baseline: the events to emit (in order) and the next baseline. */
export function transitions(
  prev: UpsBaseline,
  r: UpsReading,
  thresholdPercent: number,
  now: Date,
): { events: Transition[]; next: UpsBaseline } {
  const events: Transition[] = [];
  const ob = r.flags.includes('OB');
  const ol = r.flags.includes('OL') && !ob;
  let { onBattery, onBatterySince } = prev;
  if (!onBattery && ob) {
    onBattery = true;
    onBatterySince = now.toISOString();
    events.push({ type: 'ups_on_battery', extra: {} });
  } else if (onBattery && ol) {
    const since = onBatterySince ? Date.parse(onBatterySince) : NaN;
    events.push({
      type: 'ups_online',
      extra: Number.isFinite(since)
        ? { on_battery_seconds: Math.max(0, Math.round((now.getTime() - since) / 1000)) }
        : {},
    });
    onBattery = false;
    onBatterySince = undefined;
  }
  const low = isLow(r, thresholdPercent, prev.low);
  if (low && !prev.low) {
    events.push({
      type: 'ups_low_battery',
      extra: {
        threshold_percent: thresholdPercent,
        reason: r.flags.includes('LB') ? 'ups_flag' : 'charge_below_threshold',
      },
    });
  }
  const replace = r.flags.includes('RB');
  if (replace && !prev.replace) events.push({ type: 'ups_battery_replace', extra: {} });
  const next: UpsBaseline = {
    onBattery,
    ...(onBatterySince ? { onBatterySince } : {}),
    low,
    replace,
    status: r.status,
  };
  return { events, next };
}
