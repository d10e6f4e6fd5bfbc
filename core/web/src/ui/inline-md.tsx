/**
 * Help text's inline Markdown as elements: `code`, **bold**, and [text](https://… or /path) links;
 * everything else stays text. Plugins write their field and event descriptions this way; no HTML is
 * parsed, so a description can show nothing but these. The text is one `.inline-md` span.
 */
import type { JSX } from 'preact';

const TOKEN = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(((?:https?:\/\/|\/)[^)\s]+)\)/g;

export function InlineMd({ text }: { text: string }): JSX.Element {
  const out: (string | JSX.Element)[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(<code key={m.index}>{m[1]}</code>);
    else if (m[2] !== undefined) out.push(<strong key={m.index}>{m[2]}</strong>);
    else
      out.push(
        <a key={m.index} href={m[4]} target="_blank" rel="noopener noreferrer">
          {m[3]}
        </a>,
      );
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return <span class="inline-md">{out}</span>;
}
