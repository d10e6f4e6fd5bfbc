/**
 * On a phone a table's rows stack into cards (styles.css) and its header is hidden, so a bare cell
 * ("20", "Off") would lose what it means. Every cell of a `.table` without a `data-label` of its
 * own gets its column header's text as one, which the phone layout prints above the value. A page
 * needs nothing for it: one observer labels the tables as they are drawn and redrawn.
 */

/** Labels the body cells of `table` from its header row; a header without text labels nothing. */
export function labelTable(table: HTMLTableElement): void {
  const head = table.tHead?.rows[0];
  if (!head) return;
  const labels = [...head.cells].map((c) => (c.querySelector('.sr-only') ? '' : (c.textContent ?? '').trim()));
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      // A row that spans the table (an opened event's details, an empty state) has no columns.
      if (row.cells.length !== labels.length) continue;
      [...row.cells].forEach((cell, i) => {
        // A page's own label stands; one set here follows the header (the language can change).
        if (cell.hasAttribute('data-label') && !cell.hasAttribute('data-label-auto')) return;
        const label = labels[i];
        if (!label) return;
        if (cell.dataset.label !== label) cell.dataset.label = label;
        cell.dataset.labelAuto = '';
      });
    }
  }
}

/** Keeps every `.table` under `root` labelled while the app draws. */
export function labelTablesUnder(root: HTMLElement): void {
  let queued = false;
  const run = () => {
    queued = false;
    for (const t of root.querySelectorAll<HTMLTableElement>('table.table')) labelTable(t);
  };
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(run);
  }).observe(root, { childList: true, subtree: true, characterData: true });
  run();
}
