/**
 * Light, dark or the system's scheme: the choice lives in this browser (localStorage) and shows as
 * `data-theme` on the root element, set by main.tsx before the first render. The stylesheet's dark
 * palette applies with `data-theme="dark"`, or with the system's dark scheme unless `data-theme="light"`.
 */
export const THEMES = ['system', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

const KEY = 'herald.theme';

export function theme(): Theme {
  try {
    const saved = localStorage.getItem(KEY);
    return (THEMES as readonly string[]).includes(saved ?? '') ? (saved as Theme) : 'system';
  } catch {
    return 'system';
  }
}

/** Shows the theme on the page; "system" leaves the choice to the stylesheet's media query. */
export function applyTheme(choice: Theme = theme()) {
  const root = document.documentElement;
  if (choice === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', choice);
}

export function setTheme(choice: Theme) {
  try {
    if (choice === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
  applyTheme(choice);
}
