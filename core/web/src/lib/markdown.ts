/**
 * Markdown for assistant replies. The model's text is untrusted (it may echo HTML from
 * documents or users), so raw HTML in it is shown as text, images become links (no tracking
 * pixels, no CSP noise), and DOMPurify checks everything marked produced. Links open in a new tab.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }) => escape(text),
    image: ({ href, text }) => `<a href="${escape(href)}">${escape(text || href)}</a>`,
  },
});

// A fenced block's language (`language-x` on its code element) is the one class kept, for highlighting.
DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (node.tagName === 'CODE' && data.attrName === 'class' && /^language-[\w+-]{1,30}$/.test(data.attrValue))
    data.forceKeepAttr = true;
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

const REPORT_LINK = /^\/api\/v1\/reports\/([\w-]+)\/download$/;

/**
 * A reply as safe HTML. Links to reports named in `goneReports` (deleted since) become plain text,
 * so a reply never offers a download that would fail.
 */
export function renderMarkdown(src: string, goneReports: ReadonlySet<string> = new Set()): string {
  const html = marked.parse(src, { async: false }) as string;
  const clean = DOMPurify.sanitize(html, {
    FORBID_TAGS: [
      'style',
      'form',
      'input',
      'button',
      'textarea',
      'select',
      'iframe',
      'object',
      'embed',
      'svg',
      'math',
      'img',
    ],
    FORBID_ATTR: ['style', 'class', 'id'],
    ALLOW_DATA_ATTR: false,
  });
  if (!goneReports.size || !clean.includes('/api/v1/reports/')) return clean;
  const doc = new DOMParser().parseFromString(`<body>${clean}</body>`, 'text/html');
  for (const a of [...doc.body.querySelectorAll('a[href]')]) {
    const id = REPORT_LINK.exec(a.getAttribute('href') ?? '')?.[1];
    if (id && goneReports.has(id)) a.replaceWith(...a.childNodes);
  }
  return doc.body.innerHTML;
}

let highlighter: Promise<typeof import('./highlight.ts')> | undefined;

/**
 * Fenced code in a rendered reply: highlighted (highlight.js, imported the first time a reply
 * has code) and given a copy button labelled `copyLabel` that hands the code's text to `copy`.
 * Safe to call again after a re-render.
 */
export async function enhanceCode(root: HTMLElement, copyLabel: string, copy: (text: string) => void): Promise<void> {
  const blocks = [...root.querySelectorAll<HTMLElement>('pre > code')];
  if (!blocks.length) return;
  for (const code of blocks) {
    const pre = code.parentElement!;
    if (pre.querySelector(':scope > .code-copy')) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-sm btn-ghost code-copy';
    button.textContent = copyLabel;
    button.dataset.testid = 'copy-code';
    // The text without the newline that ends every fenced block.
    button.addEventListener('click', () => copy((code.textContent ?? '').replace(/\n$/, '')));
    pre.append(button);
  }
  highlighter ??= import('./highlight.ts');
  const { highlight } = await highlighter;
  for (const code of blocks) if (code.isConnected) highlight(code);
}
