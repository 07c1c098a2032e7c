// The console page (console.html), opened with the URL the Compute API
// or /v1/instances/{id}/consoles returned:
//   console.html?path=console/websockify?token=…  a VNC console in noVNC
//   console.html?serial=console/serial?token=…    a serial terminal
// The path is a websocket path on this page's own host (the agent's
// console proxy); the token in it works once.

import RFB from '../vendor/novnc/core/rfb.js';

const params = new URLSearchParams(window.location.search);
const statusEl = document.getElementById('console-status');

// setStatus shows the connection state; tests and people read it.
function setStatus(state, text) {
  statusEl.dataset.state = state;
  statusEl.textContent = text;
}

// wsURL is a websocket URL for a path on this page's host.
function wsURL(path) {
  const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${window.location.host}/${path.replace(/^\/+/, '')}`;
}

function startVNC(url) {
  document.getElementById('console-title').textContent = 'VNC console';
  setStatus('connecting', 'Connecting…');
  const screen = document.getElementById('console-screen');
  const rfb = new RFB(screen, url, { wsProtocols: ['binary'] });
  rfb.scaleViewport = true;
  rfb.background = '#111';
  const cad = document.getElementById('console-cad');
  cad.addEventListener('click', () => rfb.sendCtrlAltDel());
  rfb.addEventListener('connect', () => {
    setStatus('connected', 'Connected');
    cad.hidden = false;
    rfb.focus();
  });
  rfb.addEventListener('disconnect', (e) => {
    cad.hidden = true;
    setStatus(e.detail.clean ? 'disconnected' : 'error',
      e.detail.clean ? 'Disconnected' : 'Could not connect: the console URL may have been used or expired');
  });
  rfb.addEventListener('securityfailure', (e) => setStatus('error', `Security failure: ${e.detail.reason || e.detail.status}`));
  rfb.addEventListener('desktopname', (e) => { document.title = `${e.detail.name} · Stratus`; });
}

// keyBytes maps a key press to what a terminal sends.
const specialKeys = {
  Enter: '\r', Backspace: '\x7f', Tab: '\t', Escape: '\x1b',
  ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C', ArrowLeft: '\x1b[D',
  Home: '\x1b[H', End: '\x1b[F', Delete: '\x1b[3~',
};

function keyBytes(e) {
  if (e.ctrlKey && e.key.length === 1) {
    const c = e.key.toUpperCase().charCodeAt(0);
    if (c >= 64 && c <= 95) return String.fromCharCode(c - 64);
  }
  if (specialKeys[e.key]) return specialKeys[e.key];
  if (e.key.length === 1 && !e.metaKey && !e.altKey) return e.key;
  return '';
}

// ansi matches the escape sequences a serial console writes; the simple
// terminal shows text only.
const ansi = /\x1b(\[[0-9;?]*[ -/]*[@-~]|[()#][0-9A-Za-z]|[0-~])/g;
const maxChars = 200000;

function startSerial(url) {
  document.getElementById('console-title').textContent = 'Serial console';
  document.getElementById('console-screen').hidden = true;
  const term = document.getElementById('console-serial');
  term.hidden = false;
  setStatus('connecting', 'Connecting…');
  const ws = new WebSocket(url, ['binary']);
  ws.binaryType = 'arraybuffer';
  const decoder = new TextDecoder();
  let text = '';
  ws.addEventListener('open', () => {
    setStatus('connected', 'Connected');
    term.focus();
  });
  ws.addEventListener('message', (e) => {
    // Escape sequences may be split across messages: clean the whole
    // text each time, not each chunk.
    text += typeof e.data === 'string' ? e.data : decoder.decode(e.data, { stream: true });
    if (text.length > maxChars) text = text.slice(-maxChars);
    const atBottom = term.scrollTop + term.clientHeight >= term.scrollHeight - 4;
    term.textContent = text.replace(ansi, '').replace(/\x1b\[?[0-9;?]*$/, '').replace(/\r\n/g, '\n').replace(/\r/g, '');
    if (atBottom) term.scrollTop = term.scrollHeight;
  });
  ws.addEventListener('close', (e) => {
    setStatus(e.wasClean ? 'disconnected' : 'error',
      e.wasClean ? 'Disconnected' : 'Could not connect: the console URL may have been used or expired');
  });
  term.addEventListener('keydown', (e) => {
    const bytes = keyBytes(e);
    if (!bytes || ws.readyState !== WebSocket.OPEN) return;
    e.preventDefault();
    ws.send(new TextEncoder().encode(bytes));
  });
}

const vncPath = params.get('path');
const serialPath = params.get('serial');
if (serialPath) {
  startSerial(wsURL(serialPath));
} else if (vncPath) {
  startVNC(wsURL(vncPath));
} else {
  setStatus('error', 'No console to open: the URL has no path (ask the Compute API for a console URL).');
}
