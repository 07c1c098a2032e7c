// The instance page's console card: open the VNC console (noVNC) or the
// serial terminal in a new tab, and show the end of the console log. The
// card is built once per page and kept across the page's live redraws.

import { ApiError, compute, serverAction } from '../api.js';
import { h, replace } from '../dom.js';
import { notify } from '../notice.js';

// logLines is how much of the console log the card shows.
const logLines = 200;

// consolePageURL turns a console URL from the Compute API into the UI's
// console page on the same host: the noVNC URL opens noVNC's own page
// (vnc_lite.html, as Nova's do), which becomes console.html with the same
// ?path=; a serial ws:// URL becomes console.html?serial=<its path>.
export function consolePageURL(url) {
  const u = new URL(url, window.location.href);
  if (u.protocol === 'ws:' || u.protocol === 'wss:') {
    const origin = `${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}`;
    return `${origin}/ui/console.html?serial=${encodeURIComponent(u.pathname.replace(/^\/+/, '') + u.search)}`;
  }
  if (u.pathname.endsWith('/ui/vendor/novnc/vnc_lite.html')) {
    u.pathname = u.pathname.replace(/\/ui\/vendor\/novnc\/vnc_lite\.html$/, '/ui/console.html');
  }
  return u.href;
}

function describe(err) {
  if (err instanceof ApiError && err.status === 501) return 'This instance\'s hypervisor does not offer that console.';
  if (err instanceof ApiError && err.status === 409) return 'The instance has no console now (it is not running on a host).';
  return err.message || String(err);
}

export function consoleCard(id, { signal } = {}) {
  const log = h('pre', { class: 'console-log', id: 'console-log', tabindex: '0', hidden: true });
  const open = (protocol, type) => async (e) => {
    const btn = e.currentTarget;
    btn.disabled = true;
    try {
      const data = await compute('POST', `/servers/${encodeURIComponent(id)}/remote-consoles`,
        { body: { remote_console: { protocol, type } }, signal });
      window.open(consolePageURL(data.remote_console.url), '_blank', 'noopener');
    } catch (err) {
      notify(`Could not open the console: ${describe(err)}`, 'error');
    } finally {
      btn.disabled = false;
    }
  };
  const showLog = async (e) => {
    const btn = e.currentTarget;
    btn.disabled = true;
    try {
      const data = await serverAction(id, 'os-getConsoleOutput', { length: logLines }, { signal });
      log.hidden = false;
      replace(log, data.output || '(the console log is empty)');
      log.scrollTop = log.scrollHeight;
    } catch (err) {
      notify(`Could not read the console log: ${describe(err)}`, 'error');
    } finally {
      btn.disabled = false;
    }
  };
  return h('section', { class: 'card', 'aria-labelledby': 'console-h', id: 'console-card' },
    h('h2', { id: 'console-h' }, 'Console'),
    h('div', { class: 'ops', role: 'group', 'aria-label': 'Console' },
      h('button', { type: 'button', class: 'btn', id: 'console-vnc', onclick: open('vnc', 'novnc') }, 'Open VNC console'),
      h('button', { type: 'button', class: 'btn', id: 'console-serial-open', onclick: open('serial', 'serial') }, 'Open serial console'),
      h('button', { type: 'button', class: 'btn', id: 'console-log-show', onclick: showLog }, 'Show console log')),
    h('p', { class: 'muted small' }, 'Consoles open in a new tab; each console link works once and expires after a few minutes.'),
    log);
}
