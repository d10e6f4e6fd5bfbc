/** A handful of stroke icons (inline SVG, no icon font, nothing fetched). */
import type { JSX } from 'preact';

const paths: Record<string, string> = {
  menu: 'M4 6h16M4 12h16M4 18h16',
  close: 'M6 6l12 12M18 6L6 18',
  plus: 'M12 5v14M5 12h14',
  copy: 'M9 9h10v10H9zM5 15V5h10',
  refresh: 'M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7',
  send: 'M4 12l16-8-6 16-2-6z',
  stop: 'M7 7h10v10H7z',
  download: 'M12 4v11m0 0l-4-4m4 4l4-4M5 20h14',
  chevron: 'M9 6l6 6-6 6',
  trash: 'M5 7h14M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3',
  edit: 'M4 20h4L19 9l-4-4L4 16zM13 7l4 4',
  logo: 'M12 3l8 4v5c0 5-3.5 8-8 9-4.5-1-8-4-8-9V7z M9 12l2 2 4-4',
};

export function Icon({ name, size = 18 }: { name: keyof typeof paths | string; size?: number }): JSX.Element {
  return (
    <svg
      class="icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d={paths[name] ?? ''} />
    </svg>
  );
}
