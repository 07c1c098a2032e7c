// Hosts (admins): each host's liveness, scheduling state, drain, capacity
// per resource class and instances, with enable, disable and drain; live.

import { v1 } from '../api.js';
import { confirmDialog } from '../dialog.js';
import { h, replace, meter, fmtAmount, className, timeEl } from '../dom.js';
import { watch } from '../live.js';
import { notify } from '../notice.js';
import { badge, hostBadge } from '../status.js';

// capacityMeters draws one bar per resource class: used of what may be
// allocated ((total - reserved) × allocation ratio).
export function capacityMeters(capacity) {
  const order = ['VCPU', 'MEMORY_MB', 'DISK_GB'];
  const classes = Object.keys(capacity || {}).sort((a, b) => {
    const ia = order.indexOf(a) < 0 ? 99 : order.indexOf(a);
    const ib = order.indexOf(b) < 0 ? 99 : order.indexOf(b);
    return ia - ib || a.localeCompare(b);
  });
  if (!classes.length) return h('p', { class: 'muted' }, 'No inventory reported.');
  return h('div', { class: 'meters' }, classes.map((cls) => {
    const c = capacity[cls];
    const detail = `${fmtAmount(cls, c.Used)} of ${fmtAmount(cls, c.Capacity)}` +
      (c.Capacity !== c.Total ? ` (${fmtAmount(cls, c.Total)} raw)` : '');
    return meter(className(cls), c.Used, c.Capacity, detail);
  }));
}

function liveness(host) {
  if (host.Status === 'up') return hostBadge('up', 'ok');
  if (host.Status === 'down') return hostBadge('down', 'bad');
  return hostBadge(host.Status || 'unknown', 'warn');
}

function scheduling(host) {
  if (host.Drain && !host.Drain.Complete) return hostBadge('draining', 'busy');
  if (host.Drain && host.Drain.Complete) return hostBadge('drained', 'off');
  if (!host.Enabled) return hostBadge('disabled', 'off');
  return hostBadge('enabled', 'ok');
}

async function hostOp(host, op) {
  let values;
  if (op === 'enable') {
    values = await confirmDialog({ title: `Enable ${host.Name}?`, message: 'The scheduler may place instances on the host again; a drain under way is cancelled.', confirmLabel: 'Enable' });
  } else if (op === 'disable') {
    values = await confirmDialog({ title: `Disable ${host.Name}?`, message: 'The scheduler stops placing instances on the host; those on it keep running.',
      fields: [{ name: 'reason', label: 'Reason (optional)', type: 'text' }], confirmLabel: 'Disable', danger: true });
  } else {
    values = await confirmDialog({ title: `Drain ${host.Name}?`, message: 'The host is disabled and every instance on it is moved to other hosts.',
      fields: [{ name: 'reason', label: 'Reason (optional)', type: 'text' }], confirmLabel: 'Drain', danger: true });
  }
  if (!values) return;
  try {
    const body = values.reason ? { Reason: values.reason } : undefined;
    await v1('POST', `/hosts/${encodeURIComponent(host.ID)}/${op}`, { body });
    notify(`${op[0].toUpperCase()}${op.slice(1)}: ${host.Name} accepted.`, 'ok');
  } catch (e) {
    notify(`${op} ${host.Name} failed: ${e.message}`, 'error');
  }
}

export async function render({ root, signal }) {
  const list = h('div', { class: 'hosts', id: 'hosts' }, h('p', { class: 'loading' }, 'Loading…'));
  const summary = h('p', { class: 'muted', id: 'hosts-summary' });
  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Hosts')), summary, list);
  let hosts = null;
  let instances = [];

  function draw() {
    if (!hosts) return;
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
    const byHost = {};
    for (const i of instances) {
      if (i.HostID) (byHost[i.HostID] = byHost[i.HostID] || []).push(i);
    }
    const up = hosts.filter((x) => x.Status === 'up').length;
    summary.textContent = `${hosts.length} host${hosts.length === 1 ? '' : 's'}: ${up} up, ${hosts.length - up} not up.`;
    const sorted = [...hosts].sort((a, b) => a.Name.localeCompare(b.Name));
    replace(list, sorted.length ? sorted.map((host) => {
      const insts = (byHost[host.ID] || []).sort((a, b) => a.Name.localeCompare(b.Name));
      const hid = `host-${host.ID}`;
      return h('section', { class: 'card host', 'aria-labelledby': hid, 'data-host': host.Name },
        h('div', { class: 'host-head' },
          h('h2', { id: hid }, host.Name), liveness(host), scheduling(host)),
        h('p', { class: 'muted small' },
          [host.HypervisorType || host.Driver, host.Arch, `zone ${host.AZ || 'nova'}`].filter(Boolean).join(' · '),
          host.DisabledReason ? ` · disabled: ${host.DisabledReason}` : '',
          host.Drain && host.Drain.StartedAt ? [' · drain started ', timeEl(host.Drain.StartedAt)] : ''),
        capacityMeters(host.Capacity),
        h('details', { class: 'host-instances', open: insts.length > 0 && insts.length <= 8 },
          h('summary', {}, `${insts.length} instance${insts.length === 1 ? '' : 's'}`),
          insts.length ? h('ul', { class: 'plain' }, insts.map((i) => h('li', {},
            h('a', { href: `#/instances/${encodeURIComponent(i.ID)}` }, i.Name), ' ', badge(i.Status))))
            : h('p', { class: 'muted' }, 'None.')),
        h('div', { class: 'ops', role: 'group', 'aria-label': `Actions on ${host.Name}` },
          host.Enabled ? null : h('button', { type: 'button', class: 'btn', 'data-focus': `enable-${host.ID}`, onclick: () => hostOp(host, 'enable') }, 'Enable'),
          host.Enabled ? h('button', { type: 'button', class: 'btn btn-danger-outline', 'data-focus': `disable-${host.ID}`, onclick: () => hostOp(host, 'disable') }, 'Disable') : null,
          host.Drain && !host.Drain.Complete ? null : h('button', { type: 'button', class: 'btn btn-danger-outline', 'data-focus': `drain-${host.ID}`, onclick: () => hostOp(host, 'drain') }, 'Drain')));
    }) : h('p', { class: 'muted' }, 'No hosts registered yet.'));
    if (focusKey) {
      const el = list.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`);
      if (el) el.focus();
    }
  }

  watch('/hosts', (data) => {
    hosts = data || [];
    draw();
  }, { signal });
  watch('/instances', (data) => {
    instances = data || [];
    draw();
  }, { signal });
}
