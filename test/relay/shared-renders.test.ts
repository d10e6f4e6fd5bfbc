/**
 * The deliveries of one event share its renders (render.ts, SharedRenders): a fan-out to N targets renders once per
 * way of rendering it. Whatever is shared, every delivery's message must equal what rendering it alone gives.
 */
import t from 'tap';
import type { LoadedPlugin } from '../../core/src/plugins/loader.ts';
import {
  type RenderInput,
  renderMessage,
  SharedRenders,
  type TargetSide,
} from '../../core/src/relay/pipeline/render.ts';
import { TemplateCatalog } from '../../core/src/relay/templates/catalog.ts';

const templates = {
  en: {
    'x.plain': { title: '{{provider_name}}: {{summary}}', body: '{{detail}} *{{severity}}*' },
    'x.named': { title: 'For {{target_name}}: {{summary}}', body: '{{detail}}' },
    'x.tracked': { title: '{{summary}}', body: 'via {{tracker_name}}' },
  },
  ru: {
    'x.plain': { title: '{{provider_name}}: {{summary}} (ru)', body: '{{detail}} *{{severity}}*' },
    'x.named': { title: 'Для {{target_name}}: {{summary}}', body: '{{detail}}' },
    'x.tracked': { title: '{{summary}} (ru)', body: 'через {{tracker_name}}' },
  },
};
const catalog = new TemplateCatalog(
  [{ def: { manifest: { templates } } } as unknown as LoadedPlugin],
  '/nonexistent-locales-dir',
);

function eventOf(type: string): Omit<RenderInput, keyof TargetSide> {
  return {
    eventId: 'ev1',
    eventType: type,
    severity: 'warning',
    payload: { summary: 'Disk *almost* full', detail: 'sda1 at 93%', token: 'hunter2' },
    extras: { password: 'secret', room: 'lab' },
    providerName: 'NAS',
    providerKind: 'webhook',
    occurredAt: '2026-11-29T01:00:00.000Z',
  };
}

/** Target sides that differ in every way a render can depend on, and some that differ only in what it cannot. */
const sides: TargetSide[] = [
  { deliveryId: 'd1', locale: 'en', formats: ['markdown'], targetName: 'chat one', trackerName: 'disks' },
  { deliveryId: 'd2', locale: 'en', formats: ['markdown'], targetName: 'chat two', trackerName: 'disks' },
  { deliveryId: 'd3', locale: 'ru', formats: ['markdown'], targetName: 'чат', trackerName: 'disks' },
  { deliveryId: 'd4', locale: 'en', formats: ['text'], targetName: 'mail', trackerName: 'disks' },
  { deliveryId: 'd5', locale: 'en', formats: ['html', 'text'], targetName: 'mail 2', trackerName: 'disks' },
  { deliveryId: 'd6', locale: 'en', formats: ['markdown'], targetName: 'chat three', trackerName: 'other tracker' },
  { deliveryId: 'd7', locale: 'en', formats: ['markdown'], targetName: 'chat four', trackerName: undefined },
  {
    deliveryId: 'd8',
    locale: 'en',
    formats: ['markdown'],
    targetName: 'own template',
    trackerName: 'disks',
    override: { title: 'Mine: {{summary}}', body: '{{detail}}' },
  },
  {
    deliveryId: 'd9',
    locale: 'en',
    formats: ['markdown'],
    targetName: 'own named',
    trackerName: 'disks',
    override: { title: 'Mine for {{target_name}}', body: '{{detail}}' },
  },
  {
    deliveryId: 'd10',
    locale: 'en',
    formats: ['markdown'],
    targetName: 'own named 2',
    trackerName: 'disks',
    override: { title: 'Mine for {{target_name}}', body: '{{detail}}' },
  },
];

t.test('every delivery gets the message rendering it alone gives', async (t) => {
  for (const type of ['x.plain', 'x.named', 'x.tracked']) {
    const shared = new SharedRenders(catalog, () => eventOf(type));
    // Twice over: the second pass is served from what the first made.
    for (const pass of [1, 2])
      for (const side of sides)
        t.same(
          shared.render(side),
          renderMessage(catalog, { ...eventOf(type), ...side }),
          `${type}, ${side.deliveryId}, pass ${pass}`,
        );
  }
});

t.test('targets alike share one render; what tells them apart renders anew', async (t) => {
  let facts = 0;
  const shared = new SharedRenders(catalog, () => {
    facts++;
    return eventOf('x.plain');
  });
  const [a, b, ru, text] = [sides[0]!, sides[1]!, sides[2]!, sides[3]!].map((s) => shared.render(s));
  t.equal(facts, 1, "the event's side (its payload parsed) is made once");
  t.equal(a!.deliveryId, 'd1');
  t.equal(b!.deliveryId, 'd2', 'each copy names its own delivery');
  t.equal(b!.payload, a!.payload, 'two targets alike share the render (the same redacted payload)');
  t.not(ru!.payload, a!.payload, 'another locale renders anew');
  t.match(ru!.title, /\(ru\)$/);
  t.not(text!.payload, a!.payload, 'another format renders anew');
  t.same(a!.payload, { summary: 'Disk *almost* full', detail: 'sda1 at 93%', token: '[REDACTED]' });

  // A plugin that changes its message changes its own copy only.
  b!.title = 'changed by a plugin';
  t.equal(shared.render({ ...sides[0]!, deliveryId: 'd11' }).title, a!.title);

  const named = new SharedRenders(catalog, () => eventOf('x.named'));
  const n1 = named.render(sides[0]!);
  const n2 = named.render(sides[1]!);
  t.equal(n1.title, 'For chat one: Disk \\*almost\\* full', 'a template naming the target renders per target');
  t.equal(n2.title, 'For chat two: Disk \\*almost\\* full');
  t.not(n2.payload, n1.payload);

  const tracked = new SharedRenders(catalog, () => eventOf('x.tracked'));
  t.equal(tracked.render(sides[0]!).body, 'via disks');
  t.equal(tracked.render(sides[5]!).body, 'via other tracker', 'another tracker renders anew');
  t.equal(tracked.render(sides[6]!).body, 'via ', 'no tracker');

  const own = new SharedRenders(catalog, () => eventOf('x.plain'));
  t.equal(own.render(sides[0]!).title, 'NAS: Disk \\*almost\\* full');
  t.equal(own.render(sides[7]!).title, 'Mine: Disk \\*almost\\* full', "a user's own template renders anew");
  t.equal(own.render(sides[8]!).title, 'Mine for own named', 'one naming the target, per target');
  t.equal(own.render(sides[9]!).title, 'Mine for own named 2');
});
