/** Event types of the NUT provider with payload schemas, severities and quiet-hours policies. */

import type { EventSpec } from '@herald/plugin-api';
import { Type } from '@herald/plugin-api';

const Opt = Type.Optional;

/** Fields every UPS reading event carries. */
const reading = {
  /** The UPS name on its server. */
  ups: Type.String(),
  /** `host:port` of upsd. */
  server: Type.String(),
  /** Raw `ups.status`, e.g. `OB DISCHRG`. */
  status: Type.String(),
  status_flags: Type.Array(Type.String()),
  battery_charge: Opt(Type.Number()),
  battery_runtime_seconds: Opt(Type.Number()),
  battery_runtime_minutes: Opt(Type.Integer()),
};

export const OnBatteryPayload = Type.Object(reading);
export const OnlinePayload = Type.Object({ ...reading, on_battery_seconds: Opt(Type.Integer({ minimum: 0 })) });
export const LowBatteryPayload = Type.Object({
  ...reading,
  threshold_percent: Type.Integer(),
  /** `ups_flag` (the UPS raised LB) or `charge_below_threshold`. */
  reason: Type.Union([Type.Literal('ups_flag'), Type.Literal('charge_below_threshold')]),
});
export const ReplacePayload = Type.Object(reading);
export const CommLostPayload = Type.Object({ ups: Type.String(), server: Type.String(), reason: Type.String() });
export const CommRestoredPayload = Type.Object({ ...reading, downtime_seconds: Opt(Type.Integer({ minimum: 0 })) });

/** What a sample reading ("send a test event") has in common. */
const SAMPLE = {
  ups: 'rack',
  server: 'nas.local:3493',
  battery_charge: 64,
  battery_runtime_seconds: 1260,
  battery_runtime_minutes: 21,
};

/**
 * Power events go out at once even in quiet hours: a UPS on battery may shut machines down
 * within minutes. A worn battery can wait for the morning.
 */
/**
 * Power state (on battery, low battery, back on line) is one message per UPS that later readings
 * edit; so is the link to it (lost, restored). See the plugin API's `CorrelationSpec`.
 */
const POWER = { key: ['server', 'ups'], thread: 'power' };
const COMM = { key: ['server', 'ups'], thread: 'comm' };

export const EVENTS: Record<string, EventSpec> = {
  ups_on_battery: {
    payload: OnBatteryPayload,
    quietHours: 'send',
    severity: 'critical',
    description: 'Mains power failed; the UPS runs on battery (never on the first poll).',
    correlation: POWER,
    example: { ...SAMPLE, status: 'OB DISCHRG', status_flags: ['OB', 'DISCHRG'] },
  },
  ups_online: {
    payload: OnlinePayload,
    quietHours: 'send',
    severity: 'info',
    description: 'Mains power is back.',
    correlation: POWER,
    example: {
      ...SAMPLE,
      status: 'OL CHRG',
      status_flags: ['OL', 'CHRG'],
      battery_charge: 88,
      on_battery_seconds: 240,
    },
  },
  ups_low_battery: {
    payload: LowBatteryPayload,
    quietHours: 'send',
    severity: 'critical',
    description: 'The UPS reports low battery, or the charge fell below the threshold.',
    correlation: POWER,
    example: {
      ...SAMPLE,
      status: 'OB DISCHRG LB',
      status_flags: ['OB', 'DISCHRG', 'LB'],
      battery_charge: 18,
      battery_runtime_seconds: 300,
      battery_runtime_minutes: 5,
      threshold_percent: 20,
      reason: 'charge_below_threshold',
    },
  },
  ups_battery_replace: {
    payload: ReplacePayload,
    quietHours: 'defer',
    severity: 'warning',
    description: 'The UPS asks for a battery replacement.',
    example: { ...SAMPLE, status: 'OL RB', status_flags: ['OL', 'RB'], battery_charge: 100 },
  },
  ups_comm_lost: {
    payload: CommLostPayload,
    quietHours: 'send',
    severity: 'critical',
    description: 'upsd or the UPS stopped answering after having answered before.',
    correlation: COMM,
    example: { ups: 'rack', server: 'nas.local:3493', reason: 'connection refused' },
  },
  ups_comm_restored: {
    payload: CommRestoredPayload,
    quietHours: 'send',
    severity: 'info',
    description: 'The UPS answers again.',
    correlation: COMM,
    example: { ...SAMPLE, status: 'OL', status_flags: ['OL'], battery_charge: 100, downtime_seconds: 120 },
  },
};
