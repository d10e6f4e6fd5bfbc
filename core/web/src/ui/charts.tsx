/**
 * The overview's charts (`GET /api/stats`), drawn with uPlot on canvas: events per day by dispatch status for 30
 * days in the browser's time zone, per target the delivery success rate with its p95 latency, and failures by
 * target. Its own chunk (uPlot with it), loaded only by the overview. Colours come from the stylesheet's variables
 * and the charts are drawn again when the theme changes; each chart has a table of the same figures for screen
 * readers, and the legends are in the interface language.
 */
import 'uplot/dist/uPlot.min.css';
import './charts.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { locale, num, t, tOr } from '../lib/i18n.ts';
import type { Stats } from '../lib/types.ts';
import { Card, Empty } from './basics.tsx';
import { shownName } from './names.ts';

const tag = () => (locale() === 'ru' ? 'ru-RU' : 'en-GB');
/** "3 Mar" for a `YYYY-MM-DD` day. */
const dayLabel = (date: string) =>
  new Intl.DateTimeFormat(tag(), { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(
    new Date(`${date}T00:00:00Z`),
  );
const seconds = (ms: number | null) =>
  ms === null
    ? '—'
    : t('charts.seconds', { n: new Intl.NumberFormat(tag(), { maximumFractionDigits: 2 }).format(ms / 1000) });
const percent = (r: number | null) =>
  r === null ? '—' : new Intl.NumberFormat(tag(), { style: 'percent', maximumFractionDigits: 1 }).format(r);
const statusLabel = (s: string) => tOr(`status.${s}`, s);

/** The stylesheet's colours now (light or dark). */
function palette() {
  const cs = getComputedStyle(document.documentElement);
  const v = (name: string) => cs.getPropertyValue(name).trim();
  const status: Record<string, string> = {
    dispatched: v('--ok'),
    failed: v('--danger'),
    partial: v('--warn'),
    deferred: v('--info'),
    pending: v('--accent'),
    dropped: v('--muted'),
  };
  return { text: v('--text'), muted: v('--muted'), grid: v('--border'), accent: v('--accent'), status };
}

/** A number that changes when the theme (the root's data-theme, or the system's scheme) changes. */
function useThemeVersion(): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const bump = () => setN((x) => x + 1);
    const observer = new MutationObserver(bump);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    const media = matchMedia('(prefers-color-scheme: dark)');
    media.addEventListener('change', bump);
    return () => {
      observer.disconnect();
      media.removeEventListener('change', bump);
    };
  }, []);
  return n;
}

/** One uPlot chart in a box as wide as its card, redrawn when `opts` change. */
function Plot({
  make,
  data,
  testid,
}: {
  make: (width: number) => uPlot.Options;
  data: uPlot.AlignedData;
  testid: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const plot = new uPlot(make(el.clientWidth || 600), data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth || 600, height: plot.height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [make, data]);
  return <div ref={box} class="chart" aria-hidden="true" data-testid={testid} />;
}

function axes(c: ReturnType<typeof palette>, x: Partial<uPlot.Axis>, y: Partial<uPlot.Axis>[]): uPlot.Axis[] {
  const base = { stroke: c.muted, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } };
  return [{ ...base, ...x }, ...y.map((a) => ({ ...base, ...a }))];
}

/** The x scale of categories 0…n-1 with half a step of room on each side. */
const categories = (n: number): uPlot.Scale => ({ time: false, range: () => [-0.5, Math.max(0.5, n - 0.5)] });
const everyIndex = (n: number) => () => Array.from({ length: n }, (_, i) => i);

function EventsChart({ stats, theme }: { stats: Stats; theme: number }) {
  const days = stats.days;
  const [chart, setChart] = useState<{ make: (w: number) => uPlot.Options; data: uPlot.AlignedData } | null>(null);
  useEffect(() => {
    const c = palette();
    const labels = days.map((d) => dayLabel(d.date));
    const data: uPlot.AlignedData = [
      days.map((_, i) => i),
      ...stats.statuses.map((s) => days.map((d) => d.counts[s] ?? 0)),
    ];
    const make = (width: number): uPlot.Options => ({
      width,
      height: 220,
      scales: { x: { time: false } },
      cursor: { points: { show: true } },
      legend: { live: false },
      axes: axes(c, { values: (_u, splits) => splits.map((i) => labels[i] ?? ''), space: 48 }, [
        { values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? num(v) : '')) },
      ]),
      series: [
        { label: t('charts.day') },
        ...stats.statuses.map((s) => ({
          label: statusLabel(s),
          stroke: c.status[s] ?? c.accent,
          width: 2,
          points: { show: true, size: 5 },
        })),
      ],
    });
    setChart({ make, data });
  }, [stats, theme, locale()]);
  return (
    <>
      {chart && <Plot testid="chart-events" make={chart.make} data={chart.data} />}
      <div class="sr-only">
        <table data-testid="chart-events-table">
          <caption>{t('charts.events_title')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('charts.day')}</th>
              {stats.statuses.map((s) => (
                <th scope="col" key={s}>
                  {statusLabel(s)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days
              .filter((d) => d.total > 0)
              .map((d) => (
                <tr key={d.date}>
                  <th scope="row">{dayLabel(d.date)}</th>
                  {stats.statuses.map((s) => (
                    <td key={s}>{num(d.counts[s] ?? 0)}</td>
                  ))}
                </tr>
              ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function TargetsChart({ stats, theme }: { stats: Stats; theme: number }) {
  const list = stats.targets;
  const [chart, setChart] = useState<{ make: (w: number) => uPlot.Options; data: uPlot.AlignedData } | null>(null);
  useEffect(() => {
    const c = palette();
    const names = list.map((x) => shownName(x.name));
    const n = list.length;
    const bars = uPlot.paths.bars!({ size: [0.5, 48] });
    const data: uPlot.AlignedData = [
      list.map((_, i) => i),
      list.map((x) => (x.success_rate === null ? null : x.success_rate * 100)),
      list.map((x) => (x.p95_ms === null ? null : x.p95_ms / 1000)),
    ];
    const make = (width: number): uPlot.Options => ({
      width,
      height: 220,
      scales: { x: categories(n), pct: { range: [0, 100] }, s: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      legend: { live: false },
      axes: axes(c, { values: (_u, splits) => splits.map((i) => names[i] ?? ''), splits: everyIndex(n) }, [
        { scale: 'pct', size: 60, values: (_u, splits) => splits.map((v) => `${num(v)} %`) },
        {
          scale: 's',
          side: 1,
          size: 60,
          grid: { show: false },
          values: (_u, splits) => splits.map((v) => seconds(v * 1000)),
        },
      ]),
      series: [
        { label: t('charts.target') },
        {
          label: t('charts.success_rate'),
          scale: 'pct',
          stroke: c.status.dispatched,
          fill: c.status.dispatched,
          paths: bars,
        },
        {
          label: t('charts.p95'),
          scale: 's',
          stroke: c.accent,
          width: 0,
          points: { show: true, size: 9, fill: c.accent },
        },
      ],
    });
    setChart({ make, data });
  }, [stats, theme, locale()]);
  return (
    <>
      {chart && <Plot testid="chart-targets" make={chart.make} data={chart.data} />}
      <div class="sr-only">
        <table data-testid="chart-targets-table">
          <caption>{t('charts.targets_title')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('charts.target')}</th>
              <th scope="col">{t('charts.success_rate')}</th>
              <th scope="col">{t('charts.p95')}</th>
              <th scope="col">{t('charts.failures')}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((x) => (
              <tr key={x.id}>
                <th scope="row">{shownName(x.name)}</th>
                <td>{percent(x.success_rate)}</td>
                <td>{seconds(x.p95_ms)}</td>
                <td>{num(x.failed)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function FailuresChart({ stats, theme }: { stats: Stats; theme: number }) {
  const list = stats.targets.filter((x) => x.failed > 0);
  const [chart, setChart] = useState<{ make: (w: number) => uPlot.Options; data: uPlot.AlignedData } | null>(null);
  useEffect(() => {
    const c = palette();
    const names = list.map((x) => shownName(x.name));
    const n = list.length;
    const make = (width: number): uPlot.Options => ({
      width,
      height: 180,
      scales: { x: categories(n), y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      legend: { live: false },
      axes: axes(c, { values: (_u, splits) => splits.map((i) => names[i] ?? ''), splits: everyIndex(n) }, [
        { values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? num(v) : '')) },
      ]),
      series: [
        { label: t('charts.target') },
        {
          label: t('charts.failures'),
          stroke: c.status.failed,
          fill: c.status.failed,
          paths: uPlot.paths.bars!({ size: [0.5, 48] }),
        },
      ],
    });
    setChart({ make, data: [list.map((_, i) => i), list.map((x) => x.failed)] });
  }, [stats, theme, locale()]);
  if (!list.length) return <Empty>{t('charts.no_failures')}</Empty>;
  return chart && <Plot testid="chart-failures" make={chart.make} data={chart.data} />;
}

/** The three charts, each in a card; empty states say what to do next. */
export function Charts({ stats }: { stats: Stats }) {
  const theme = useThemeVersion();
  const any = stats.days.some((d) => d.total > 0);
  return (
    <div class="stack charts" data-testid="charts">
      <Card title={t('charts.events_title')}>
        {any ? (
          <EventsChart stats={stats} theme={theme} />
        ) : (
          <Empty>
            {t('charts.no_events')} <a href="#/providers">{t('charts.add_source')}</a>
          </Empty>
        )}
      </Card>
      <div class="grid-2 align-start">
        <Card title={t('charts.targets_title')}>
          {stats.targets.length ? (
            <TargetsChart stats={stats} theme={theme} />
          ) : (
            <Empty>
              {t('charts.no_targets')} <a href="#/targets">{t('charts.add_target')}</a>
            </Empty>
          )}
        </Card>
        <Card title={t('charts.failures_title')}>
          <FailuresChart stats={stats} theme={theme} />
        </Card>
      </div>
    </div>
  );
}
