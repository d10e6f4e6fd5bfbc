/**
 * Highlighting what a search matched: the query's words (their stems for longer words, as the service's search
 * matches other forms of a word: "runs" finds "running", «давление» finds «давления») marked with <mark> in plain
 * text or in rendered Markdown.
 */
import type { ComponentChildren } from 'preact';

/** How long typing pauses before a search as you type runs. */
export const SEARCH_DEBOUNCE_MS = 250;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A case-insensitive pattern for the query's words, or null for a query without any. */
export function matcher(q: string): RegExp | null {
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 2)
    .map((w) => (w.length > 5 ? w.slice(0, w.length - 2) : w));
  if (!words.length) return null;
  const unique = [...new Set(words)].sort((a, b) => b.length - a.length);
  return new RegExp(`(${unique.map(escape).join('|')})[\\p{L}\\p{N}]*`, 'giu');
}

/** `text` with the query's matches in <mark>. */
export function Marked({ text, q }: { text: string; q: string }): ComponentChildren {
  const re = matcher(q);
  if (!re) return text;
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    out.push(<mark key={at}>{m[0]}</mark>);
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Wraps the query's matches in the text of `el` (rendered, sanitized Markdown) in <mark>; returns how many. */
export function markElement(el: HTMLElement, q: string): number {
  const re = matcher(q);
  if (!re) return 0;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n as Text);
  let count = 0;
  for (const node of nodes) {
    const text = node.data;
    const found = [...text.matchAll(re)];
    if (!found.length) continue;
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of found) {
      const at = m.index ?? 0;
      if (at > last) frag.append(text.slice(last, at));
      const mark = document.createElement('mark');
      mark.textContent = m[0];
      frag.append(mark);
      last = at + m[0].length;
      count++;
    }
    if (last < text.length) frag.append(text.slice(last));
    node.replaceWith(frag);
  }
  return count;
}
