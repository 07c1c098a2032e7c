// Scheduling (admins): evaluations and the placement failures they left,
// each with the scheduler's per-filter explanation; live.

import { h, replace, timeEl, shortID } from '../dom.js';
import { watch } from '../live.js';

// parseExplanation reads Nova's NoValidHost message, "No valid host was
// found. 0/2 hosts: 1 insufficient MEMORY_MB, 1 not in zone az2", into
// {placed, evaluated, reasons: [{count, reason}]}, or null.
export function parseExplanation(message) {
  const m = /(\d+)\/(\d+) hosts: (.*)$/.exec(message || '');
  if (!m) return null;
  const reasons = [];
  for (const part of m[3].split(', ')) {
    const r = /^(\d+) (.+)$/.exec(part.trim());
    if (r) reasons.push({ count: Number(r[1]), reason: r[2] });
    else if (part.trim()) reasons.push({ count: null, reason: part.trim() });
  }
  return { placed: Number(m[1]), evaluated: Number(m[2]), reasons };
}

// explanation renders the per-filter breakdown of a NoValidHost message.
export function explanation(message) {
  const e = parseExplanation(message);
  if (!e) return null;
  return h('div', { class: 'explanation' },
    h('p', {}, `${e.evaluated} host${e.evaluated === 1 ? '' : 's'} evaluated, ${e.placed} could take it:`),
    h('ul', { class: 'filters' }, e.reasons.map((r) => h('li', {},
      r.count !== null ? h('strong', {}, `${r.count} host${r.count === 1 ? '' : 's'}`) : null,
      r.count !== null ? ' — ' : null, r.reason))));
}

const evalTone = { complete: 'ok', failed: 'bad', pending: 'busy', blocked: 'warn', canceled: 'off' };

export async function render({ root, signal }) {
  const evalBody = h('tbody');
  const failures = h('div', { id: 'placement-failures' }, h('p', { class: 'loading' }, 'Loading…'));
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Scheduling')),
    h('section', { class: 'card', 'aria-labelledby': 'pf-h' },
      h('h2', { id: 'pf-h' }, 'Placement failures'),
      h('p', { class: 'muted' }, 'Instances no host could take, with how many hosts each filter rejected.'),
      failures),
    h('section', { class: 'card', 'aria-labelledby': 'ev-h' },
      h('h2', { id: 'ev-h' }, 'Evaluations'),
      h('div', { class: 'table-wrap' }, h('table', { class: 'table', id: 'evals-table' },
        h('caption', { class: 'visually-hidden' }, 'Evaluations, newest first'),
        h('thead', {}, h('tr', {},
          ['ID', 'Status', 'Triggered by', 'Instances', 'Description', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
        evalBody))));

  let names = {};
  let evals = [];
  function drawEvals() {
    const list = [...evals].sort((a, b) => b.CreateIndex - a.CreateIndex).slice(0, 200);
    replace(evalBody, list.length ? list.map((e) => h('tr', { 'data-eval': e.ID },
      h('td', { 'data-label': 'ID', class: 'mono' }, h('span', { title: e.ID }, shortID(e.ID))),
      h('td', { 'data-label': 'Status' }, h('span', { class: `badge badge-${evalTone[e.Status] || 'warn'}` }, e.Status)),
      h('td', { 'data-label': 'Triggered by' }, e.TriggeredBy),
      h('td', { 'data-label': 'Instances' }, (e.InstanceIDs || []).map((id, i) => [i ? ', ' : '',
        h('a', { href: `#/instances/${encodeURIComponent(id)}` }, names[id] || shortID(id))])),
      h('td', { 'data-label': 'Description' }, e.StatusDescription || '—'),
      h('td', { 'data-label': 'Created' }, timeEl(e.CreatedAt))))
      : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No evaluations yet.')));
  }
  watch('/evaluations', (data) => {
    evals = data || [];
    drawEvals();
  }, { signal });

  watch('/instances', (insts) => {
    names = {};
    for (const i of insts || []) names[i.ID] = i.Name;
    drawEvals();
    const failed = (insts || []).filter((i) => i.Fault && /No valid host/.test(i.Fault.Message || ''))
      .sort((a, b) => (b.Fault.CreatedAt || 0) - (a.Fault.CreatedAt || 0));
    replace(failures, failed.length ? h('ul', { class: 'failures' }, failed.map((i) => h('li', { class: 'failure', 'data-id': i.ID },
      h('div', { class: 'failure-head' },
        h('a', { href: `#/instances/${encodeURIComponent(i.ID)}` }, i.Name),
        ' ', h('span', { class: 'badge badge-bad' }, i.Status),
        ' ', h('span', { class: 'muted small' }, timeEl(i.Fault.CreatedAt))),
      h('p', { class: 'fault-message' }, i.Fault.Message),
      explanation(i.Fault.Message))))
      : h('p', { class: 'muted' }, 'No placement failures.'));
  }, { signal });
}
