/** Entry point: styles, the theme, the document language, and the app. */
import { render } from 'preact';
import { App } from './app.tsx';
import { loadLocale, locale } from './lib/i18n.ts';
import { applyTheme } from './lib/theme.ts';
import { labelTablesUnder } from './ui/table-labels.ts';

// The remembered theme, before anything is drawn (the stylesheet follows the system meanwhile).
applyTheme();
document.documentElement.lang = locale();
// The strings must be there before the first paint; the language is one small chunk.
const root = document.getElementById('app')!;
void loadLocale(locale()).finally(() => render(<App />, root));
// On a phone each table cell shows its column's name (ui/table-labels.ts).
labelTablesUnder(root);
