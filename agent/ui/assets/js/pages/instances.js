// Instances: the user's servers (every project's for admins), filtered,
// sorted and searched in the browser, with bulk actions; live.

import { compute, service } from '../api.js';
import { h, replace, timeEl, shortID } from '../dom.js';
import { watchInstances } from '../live.js';
import { runBulk } from '../ops.js';
import { badge, BULK, STATUSES } from '../status.js';

// addressText flattens Nova's addresses map: "net: 10.0.0.3, fd00::3".
export function addressText(addresses) {
  const parts = [];
  for (const [net, list] of Object.entries(addresses || {})) {
    parts.push(`${net}: ${(list || []).map((a) => a.addr).join(', ')}`);
  }
  return parts.join('; ');
}

// flavorName is the server's flavor for people.
export function flavorName(server) {
  const f = server.flavor || {};
  return f.original_name || f.id || '';
}

// projectNames maps project ids to names for admins (identity admin API).
export async function projectNames(signal) {
  try {
    const data = await service('identity', 'GET', '/projects', { signal });
    const out = {};
    for (const p of (data && data.projects) || []) out[p.id] = p.name;
    return out;
  } catch {
    return {};
  }
}

const columns = [
  { key: 'name', label: 'Name', value: (s) => s.name.toLowerCase() },
  { key: 'status', label: 'Status', value: (s) => s.status },
  { key: 'flavor', label: 'Flavor', value: (s) => flavorName(s) },
  { key: 'addresses', label: 'Addresses', value: (s) => addressText(s.addresses) },
  { key: 'host', label: 'Host', admin: true, value: (s) => s['OS-EXT-SRV-ATTR:host'] || '' },
  { key: 'project', label: 'Project', admin: true, value: (s, ctx) => ctx.projects[s.tenant_id] || s.tenant_id || '' },
  { key: 'created', label: 'Created', value: (s) => s.created || '' },
];

export async function render({ root, signal, session, query }) {
  const isAdmin = session.isAdmin;
  const state = {
    servers: [], projects: {}, selected: new Set(),
    search: query.get('q') || '', status: query.get('status') || '', sort: 'created', dir: 'desc',
    allProjects: isAdmin, loaded: false, error: '',
  };
  if (isAdmin) state.projects = await projectNames(signal);

  const search = h('input', { id: 'inst-search', type: 'search', value: state.search, placeholder: 'Name, ID, address, host…', autocomplete: 'off' });
  const statusSel = h('select', { id: 'inst-status' },
    h('option', { value: '' }, 'All statuses'),
    STATUSES.map((s) => h('option', { value: s, selected: s === state.status }, s.replaceAll('_', ' '))));
  const allBox = isAdmin ? h('input', { id: 'inst-all', type: 'checkbox', checked: state.allProjects }) : null;
  const count = h('p', { class: 'muted count', id: 'inst-count', 'aria-live': 'polite' });
  const errorBox = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const bulkButtons = BULK.map((o) => h('button', {
    type: 'button', class: o.danger ? 'btn btn-danger-outline' : 'btn', 'data-bulk': o.op, disabled: true,
    onclick: async () => {
      const chosen = state.servers.filter((s) => state.selected.has(s.id));
      if (!chosen.length) return;
      if (await runBulk(o, chosen)) {
        state.selected.clear();
        draw();
      }
    },
  }, o.label));
  const selectAll = h('input', { type: 'checkbox', id: 'inst-select-all', 'aria-label': 'Select all shown instances' });
  const tbody = h('tbody');
  const headRow = h('tr');
  const visibleColumns = columns.filter((c) => !c.admin || isAdmin);
  const table = h('table', { class: 'table instances-table', id: 'instances-table' },
    h('caption', { class: 'visually-hidden' }, 'Instances; column headers sort the table'),
    h('thead', {}, headRow), tbody);

  function drawHead() {
    replace(headRow,
      h('th', { scope: 'col', class: 'col-check' }, selectAll),
      visibleColumns.map((c) => {
        const sorted = state.sort === c.key;
        return h('th', { scope: 'col', 'aria-sort': sorted ? (state.dir === 'asc' ? 'ascending' : 'descending') : null },
          h('button', {
            type: 'button', class: 'sort', 'data-sort': c.key,
            onclick: () => {
              state.dir = state.sort === c.key && state.dir === 'asc' ? 'desc' : 'asc';
              state.sort = c.key;
              draw();
              headRow.querySelector(`[data-sort="${c.key}"]`).focus();
            },
          }, c.label, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, sorted ? (state.dir === 'asc' ? ' ▲' : ' ▼') : '')));
      }));
  }

  function shown() {
    const q = state.search.toLowerCase();
    const ctx = { projects: state.projects };
    let list = state.servers.filter((s) => !state.status || s.status === state.status);
    if (q) {
      list = list.filter((s) => [s.name, s.id, addressText(s.addresses), s['OS-EXT-SRV-ATTR:host'], flavorName(s),
        state.projects[s.tenant_id], s.status].some((v) => v && String(v).toLowerCase().includes(q)));
    }
    const col = columns.find((c) => c.key === state.sort) || columns[0];
    list.sort((a, b) => {
      const va = col.value(a, ctx);
      const vb = col.value(b, ctx);
      const cmp = va < vb ? -1 : va > vb ? 1 : a.name.localeCompare(b.name);
      return state.dir === 'asc' ? cmp : -cmp;
    });
    return list;
  }

  function draw() {
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
    drawHead();
    const list = shown();
    const ids = new Set(state.servers.map((s) => s.id));
    for (const id of [...state.selected]) if (!ids.has(id)) state.selected.delete(id);
    const ctx = { projects: state.projects };
    const rows = list.map((s) => {
      const fault = s.status === 'ERROR' && s.fault ? h('div', { class: 'fault-line' }, s.fault.message) : null;
      const cells = {
        name: h('td', { 'data-label': 'Name' },
          h('a', { href: `#/instances/${encodeURIComponent(s.id)}`, 'data-focus': `link-${s.id}`, class: 'inst-link' }, s.name),
          h('div', { class: 'muted mono small' }, shortID(s.id))),
        status: h('td', { 'data-label': 'Status' }, badge(s.status, s['OS-EXT-STS:task_state']), s.locked ? h('span', { class: 'lock', title: 'Locked' }, ' 🔒') : null, fault),
        flavor: h('td', { 'data-label': 'Flavor' }, flavorName(s)),
        addresses: h('td', { 'data-label': 'Addresses', class: 'mono small' }, addressText(s.addresses) || '—'),
        host: h('td', { 'data-label': 'Host' }, s['OS-EXT-SRV-ATTR:host'] || '—'),
        project: h('td', { 'data-label': 'Project' }, columns[5].value(s, ctx)),
        created: h('td', { 'data-label': 'Created' }, timeEl(s.created)),
      };
      const box = h('input', {
        type: 'checkbox', checked: state.selected.has(s.id), 'aria-label': `Select ${s.name}`, 'data-focus': `sel-${s.id}`,
        onchange: (e) => {
          if (e.target.checked) state.selected.add(s.id);
          else state.selected.delete(s.id);
          drawBulk(list);
        },
      });
      return h('tr', { 'data-id': s.id, 'data-name': s.name, 'data-status': s.status },
        h('td', { class: 'col-check' }, box), visibleColumns.map((c) => cells[c.key]));
    });
    if (!rows.length) {
      rows.push(h('tr', {}, h('td', { colspan: visibleColumns.length + 1, class: 'empty' },
        !state.loaded ? 'Loading…' : state.servers.length ? 'No instance matches.' : 'No instances yet. ',
        state.loaded && !state.servers.length ? h('a', { href: '#/create' }, 'Create one') : null)));
    }
    replace(tbody, rows);
    count.textContent = state.loaded ? `${list.length} of ${state.servers.length} instance${state.servers.length === 1 ? '' : 's'}` : '';
    drawBulk(list);
    if (focusKey) {
      const el = root.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
      if (el) el.focus();
    }
  }

  function drawBulk(list) {
    const n = state.selected.size;
    for (const b of bulkButtons) {
      b.disabled = n === 0;
      const o = BULK.find((x) => x.op === b.dataset.bulk);
      b.textContent = n ? `${o.label} (${n})` : o.label;
    }
    selectAll.checked = list.length > 0 && list.every((s) => state.selected.has(s.id));
    selectAll.indeterminate = !selectAll.checked && list.some((s) => state.selected.has(s.id));
  }

  selectAll.addEventListener('change', () => {
    for (const s of shown()) {
      if (selectAll.checked) state.selected.add(s.id);
      else state.selected.delete(s.id);
    }
    draw();
  });
  search.addEventListener('input', () => {
    state.search = search.value;
    draw();
  });
  statusSel.addEventListener('change', () => {
    state.status = statusSel.value;
    draw();
  });

  let seq = 0;
  async function load() {
    const mine = ++seq;
    const qs = state.allProjects ? '?all_tenants=1' : '';
    try {
      const data = await compute('GET', `/servers/detail${qs}`, { signal });
      if (mine !== seq || signal.aborted) return;
      state.servers = data.servers || [];
      state.loaded = true;
      errorBox.hidden = true;
    } catch (e) {
      if (signal.aborted) return;
      errorBox.textContent = `Could not list instances: ${e.message}`;
      errorBox.hidden = false;
    }
    draw();
  }
  if (allBox) {
    allBox.addEventListener('change', () => {
      state.allProjects = allBox.checked;
      load();
    });
  }

  root.append(
    h('div', { class: 'page-head' },
      h('h1', {}, 'Instances'),
      h('a', { class: 'btn btn-primary', href: '#/create', id: 'inst-create' }, 'Create instance')),
    h('div', { class: 'toolbar', role: 'search' },
      h('div', { class: 'field field-inline' }, h('label', { for: 'inst-search' }, 'Search'), search),
      h('div', { class: 'field field-inline' }, h('label', { for: 'inst-status' }, 'Status'), statusSel),
      allBox ? h('div', { class: 'field field-check' }, allBox, h('label', { for: 'inst-all' }, 'All projects')) : null),
    h('div', { class: 'toolbar bulk', role: 'group', 'aria-label': 'Actions on selected instances' },
      h('span', { class: 'muted' }, 'Selected:'), bulkButtons),
    count, errorBox,
    h('div', { class: 'table-wrap' }, table));
  draw();
  watchInstances(load, { signal });
}
