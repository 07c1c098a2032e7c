// Notices: one polite live region under the top bar that says what an
// action did. Errors stay until dismissed; other notices fade.

import { h, replace } from './dom.js';

let timer = null;
let shownAt = 0;

// notify shows text; kind is 'ok', 'info' or 'error'.
export function notify(text, kind = 'info') {
  const region = document.getElementById('notice');
  if (!region) return;
  clearTimeout(timer);
  shownAt = Date.now();
  const close = h('button', { type: 'button', class: 'notice-close', 'aria-label': 'Dismiss notice', onclick: () => replace(region) }, '×');
  replace(region, h('div', { class: `notice-box notice-${kind}`, 'data-kind': kind }, h('span', { class: 'notice-text' }, text), close));
  if (kind !== 'error') {
    timer = setTimeout(() => replace(region), 8000);
  }
}

// clearNotice removes the notice, unless it is younger than keepMs: a
// notice shown just before a navigation belongs to the new page.
export function clearNotice(keepMs = 0) {
  const region = document.getElementById('notice');
  if (region && Date.now() - shownAt >= keepMs) replace(region);
}
