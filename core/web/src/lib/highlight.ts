/**
 * Syntax highlighting for fenced code in assistant replies: highlight.js core with a set of
 * common languages. Imported dynamically (see markdown.ts) only when a reply has a code block,
 * so neither the first page nor the chat page carries it. highlight.js escapes the text it
 * wraps in its spans, so highlighting adds no markup from the reply itself.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = {
  bash,
  c,
  cpp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  markdown,
  plaintext,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, def] of Object.entries(languages)) hljs.registerLanguage(name, def);
hljs.configure({ ignoreUnescapedHTML: true, throwUnescapedHTML: false });

/**
 * Highlights one `<code>` element in place: its `language-x` class when known, else a guess among the registered
 * languages.
 */
export function highlight(code: HTMLElement): void {
  if (code.dataset.highlighted) return;
  const lang = /\blanguage-([\w+-]+)/.exec(code.className)?.[1];
  const text = code.textContent ?? '';
  const result =
    lang && hljs.getLanguage(lang)
      ? hljs.highlight(text, { language: lang, ignoreIllegals: true })
      : hljs.highlightAuto(text);
  code.innerHTML = result.value;
  code.classList.add('hljs');
  code.dataset.highlighted = 'yes';
}
