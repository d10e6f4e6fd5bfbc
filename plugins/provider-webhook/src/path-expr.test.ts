import t from 'tap';
import { parseTemplate, renderTemplate } from './interpolate.ts';
import { evaluate, PathExpressionError, parsePathExpression } from './path-expr.ts';

const data = {
  alert: { labels: { severity: 'critical', 'alert-name': 'DiskFull' }, value: 97.5, firing: true },
  items: [{ name: 'first' }, { name: 'second' }, { name: 'third' }],
  data: { title: '', name: 'fallback name' },
  empty: null,
};
const ev = (src: string, d: unknown = data) => evaluate(parsePathExpression(src), d);

t.test('dotted paths reach nested fields', async (t) => {
  t.equal(ev('alert.labels.severity'), 'critical');
  t.equal(ev('alert.value'), 97.5);
  t.equal(ev('alert.firing'), true);
  t.same(ev('alert.labels'), { severity: 'critical', 'alert-name': 'DiskFull' });
  t.equal(ev('alert.missing.deeper'), undefined);
  t.equal(ev('alert.value.deeper'), undefined, 'a scalar has no fields');
});

t.test('array indexes, negative indexes and quoted keys', async (t) => {
  t.equal(ev('items[0].name'), 'first');
  t.equal(ev('items[2].name'), 'third');
  t.equal(ev('items[-1].name'), 'third');
  t.equal(ev('items[3].name'), undefined);
  t.equal(ev('alert.labels["alert-name"]'), 'DiskFull');
  t.equal(ev("alert.labels['alert-name']"), 'DiskFull');
  t.equal(ev('[1].id', [{ id: 'a' }, { id: 'b' }]), 'b', 'a body that is an array');
  t.equal(ev('items.length'), 3, 'own properties of arrays are readable');
});

t.test('fallbacks skip missing, null and empty values', async (t) => {
  t.equal(ev('data.title || data.name'), 'fallback name');
  t.equal(ev('empty || nothing || items[1].name'), 'second');
  t.equal(ev("nothing || 'default text'"), 'default text');
  t.equal(ev('nothing || other'), undefined);
  t.equal(ev('  alert.labels.severity  ||  data.name '), 'critical', 'spaces around parts are fine');
});

t.test('prototype keys are refused at parse time', async (t) => {
  for (const src of [
    '__proto__',
    'a.__proto__.b',
    'constructor',
    'a.constructor.prototype',
    'a["__proto__"]',
    "x || a['constructor']",
    'prototype',
  ]) {
    t.throws(() => parsePathExpression(src), PathExpressionError, src);
  }
});

t.test('inherited properties are never read', async (t) => {
  const obj = Object.create({ inherited: 'secret' }) as Record<string, unknown>;
  obj.own = 'visible';
  t.equal(ev('own', obj), 'visible');
  t.equal(ev('inherited', obj), undefined);
  t.equal(ev('toString', {}), undefined);
  t.equal(ev('hasOwnProperty', {}), undefined);
});

t.test('malformed expressions are refused with a position', async (t) => {
  for (const src of ['', 'a.', 'a..b', 'a[', 'a[x]', 'a[0', "a['x", 'a b', 'a |', 'a || ', '|| a', 'a.b()', 'a + b']) {
    t.throws(() => parsePathExpression(src), PathExpressionError, JSON.stringify(src));
  }
  t.throws(() => parsePathExpression('a'.repeat(501)), /longer than/);
  t.throws(() => parsePathExpression(Array.from({ length: 40 }, () => 'a').join('.')), /deeper/);
});

t.test('templates interpolate expressions into text', async (t) => {
  const render = (src: string) => renderTemplate(parseTemplate(src), data);
  t.equal(render('{{alert.labels.alert-name}} at {{alert.value}}%'), 'DiskFull at 97.5%');
  t.equal(render('Name: {{ data.title || data.name }}!'), 'Name: fallback name!');
  t.equal(render('missing: [{{nothing}}]'), 'missing: []');
  t.equal(render('{{items[0]}}'), '{"name":"first"}', 'objects render as JSON');
  t.equal(render('plain text'), 'plain text');
  t.throws(() => parseTemplate('{{alert.value'), /unclosed/);
  t.throws(() => parseTemplate('{{__proto__}}'), PathExpressionError);
});
