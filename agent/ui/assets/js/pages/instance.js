// One instance: its state, host, flavor and addresses, every lifecycle
// operation that applies (after a confirmation), its fault with the
// scheduler's explanation, its instance actions and its volumes; live.

import { ApiError, compute, service } from '../api.js';
import { h, replace, timeEl, fmtTime } from '../dom.js';
import { watchInstances } from '../live.js';
import { runOperation } from '../ops.js';
import { badge, operationsFor, POWER_STATES } from '../status.js';
import { consoleCard } from './console.js';
import { explanation } from './evaluations.js';
import { volumesCard } from './volumes.js';

// actionsShown bounds how many instance actions are shown with events.
const actionsShown = 15;

export async function render({ root, signal, session, params, navigate }) {
  const id = params[0];
  const head = h('div', { class: 'page-head' }, h('h1', {}, 'Instance'));
  const body = h('div', { class: 'instance' }, h('p', { class: 'loading' }, 'Loading…'));
  root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/instances' }, '← Instances')), head, body);
  let imageNames = null;
  let gone = false;
  // The console card outlives redraws, so a shown log stays.
  const consoleSection = consoleCard(id, { signal });
  let volumesSection = null;

  // imageName names an image from the image service's list (read once;
  // no per-image lookups that could miss).
  async function imageName(ref) {
    if (!ref) return '';
    if (imageNames === null) {
      imageNames = {};
      try {
        const data = await service('image', 'GET', '/v2/images', { signal });
        for (const img of (data && data.images) || []) imageNames[img.id] = img.name || img.id;
      } catch {
        /* show ids */
      }
    }
    return imageNames[ref] || ref;
  }

  async function load() {
    if (gone) return;
    let server;
    try {
      server = (await compute('GET', `/servers/${encodeURIComponent(id)}`, { signal })).server;
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status === 404) {
        gone = true;
        replace(head, h('h1', {}, 'Instance not found'));
        replace(body, h('p', { class: 'alert alert-info' },
          `No instance ${id} is visible to you: it was deleted, or it belongs to another project.`));
        return;
      }
      replace(body, h('p', { class: 'alert alert-error', role: 'alert' }, `Could not read the instance: ${e.message}`));
      throw e;
    }
    let actions = [];
    try {
      const list = (await compute('GET', `/servers/${encodeURIComponent(id)}/os-instance-actions`, { signal })).instanceActions || [];
      actions = await Promise.all(list.slice(0, actionsShown).map(async (a) => {
        try {
          return (await compute('GET', `/servers/${encodeURIComponent(id)}/os-instance-actions/${encodeURIComponent(a.request_id)}`, { signal })).instanceAction;
        } catch {
          return a;
        }
      }));
    } catch (e) {
      if (signal.aborted) return;
      actions = null;
    }
    const image = server.image && server.image.id ? await imageName(server.image.id) : '';
    if (signal.aborted) return;
    draw(server, actions, image);
  }

  function draw(s, actions, image) {
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.op : null;
    const task = s['OS-EXT-STS:task_state'];
    replace(head, h('h1', {}, s.name), badge(s.status, task));
    const f = s.flavor || {};
    const host = s['OS-EXT-SRV-ATTR:host'];
    const addresses = Object.entries(s.addresses || {});
    const facts = [
      ['ID', h('span', { class: 'mono' }, s.id)],
      ['Status', s.status],
      ['VM state', s['OS-EXT-STS:vm_state'] || '—'],
      ['Task state', task || 'none'],
      ['Power state', POWER_STATES[s['OS-EXT-STS:power_state']] || String(s['OS-EXT-STS:power_state'] ?? '—')],
      ['Host', session.isAdmin ? (host || 'not placed') : (s.hostId ? h('span', { class: 'mono', title: 'Nova hostId: the host, hashed with your project' }, s.hostId.slice(0, 12)) : 'not placed')],
      session.isAdmin && s.host_status ? ['Host status', s.host_status] : null,
      ['Availability zone', s['OS-EXT-AZ:availability_zone'] || '—'],
      ['Flavor', f.original_name ? `${f.original_name} — ${f.vcpus} vCPU, ${f.ram} MiB RAM, ${f.disk} GiB disk` : (f.id || '—')],
      ['Image', image ? `${image}${image !== s.image.id ? ` (${s.image.id})` : ''}` : 'none'],
      ['Key pair', s.key_name || 'none'],
      ['Addresses', addresses.length
        ? h('ul', { class: 'plain' }, addresses.map(([net, list]) => h('li', {}, `${net}: `,
          h('span', { class: 'mono' }, (list || []).map((a) => a.addr).join(', ')))))
        : 'none yet (networking arrives with the Networking service)'],
      ['Locked', s.locked ? `yes${s.locked_reason ? ` — ${s.locked_reason}` : ''}` : 'no'],
      ['Created', timeEl(s.created)],
      ['Updated', timeEl(s.updated)],
    ].filter(Boolean);

    const ops = operationsFor(s, session.isAdmin);
    const opButtons = ops.map((o) => h('button', {
      type: 'button', class: o.danger ? 'btn btn-danger-outline' : 'btn', 'data-op': o.op,
      onclick: async () => {
        const ok = await runOperation(o, s);
        if (ok && (o.op === 'delete' || o.op === 'forceDelete')) {
          navigate('/instances');
        } else if (ok) {
          load().catch(() => {});
        }
      },
    }, o.label));

    const fault = s.fault ? faultBox(s.fault) : null;
    if (!volumesSection) volumesSection = volumesCard(s, { signal });
    volumesSection.update(s);

    replace(body,
      fault,
      h('section', { class: 'card', 'aria-labelledby': 'ops-h' },
        h('h2', { id: 'ops-h' }, 'Actions'),
        opButtons.length ? h('div', { class: 'ops', role: 'group', 'aria-label': 'Instance actions' }, opButtons)
          : h('p', { class: 'muted' }, 'No action applies while the instance is in this state.'),
        task ? h('p', { class: 'muted', role: 'status' }, `Working: ${task.replaceAll('_', ' ')}…`) : null),
      h('div', { class: 'grid-2' },
        h('section', { class: 'card', 'aria-labelledby': 'facts-h' },
          h('h2', { id: 'facts-h' }, 'Details'),
          h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
        h('section', { class: 'card', 'aria-labelledby': 'timeline-h' },
          h('h2', { id: 'timeline-h' }, 'Timeline'),
          timeline(actions))),
      volumesSection,
      consoleSection);
    if (focusKey) {
      const el = body.querySelector(`[data-op="${CSS.escape(focusKey)}"]`);
      if (el) el.focus();
    }
  }

  watchInstances(load, { signal });
}

// faultBox shows an instance's fault: the message, the scheduler's
// per-filter explanation of a NoValidHost, and details (admins).
export function faultBox(fault) {
  return h('section', { class: 'alert alert-error fault', role: 'alert', 'aria-labelledby': 'fault-h' },
    h('h2', { id: 'fault-h' }, `Fault${fault.code ? ` (${fault.code})` : ''}`),
    h('p', { class: 'fault-message' }, fault.message),
    explanation(fault.message),
    fault.details ? h('details', {}, h('summary', {}, 'Details'), h('pre', {}, fault.details)) : null,
    fault.created ? h('p', { class: 'small' }, 'At ', timeEl(fault.created)) : null);
}

// timeline lists instance actions, newest first, with their events.
function timeline(actions) {
  if (actions === null) return h('p', { class: 'muted' }, 'The instance\'s actions could not be read.');
  if (!actions.length) return h('p', { class: 'muted' }, 'No actions yet.');
  return h('ol', { class: 'timeline', id: 'timeline' }, actions.map((a) => {
    const failed = a.message === 'Error';
    const events = a.events || [];
    return h('li', { class: failed ? 'tl-item tl-failed' : 'tl-item', 'data-action': a.action },
      h('div', { class: 'tl-head' },
        h('strong', {}, a.action),
        failed ? h('span', { class: 'badge badge-bad' }, 'failed') : h('span', { class: 'badge badge-ok' }, events.some((e) => !e.finish_time) ? 'in progress' : 'done'),
        h('span', { class: 'muted small' }, ' ', timeEl(a.start_time))),
      h('div', { class: 'muted small mono' }, a.request_id),
      events.length ? h('ul', { class: 'tl-events' }, events.map((e) => h('li', {},
        h('span', { class: e.result === 'Error' ? 'ev-bad' : 'ev-ok' }, e.result || '…'), ' ',
        e.event, ' ', h('span', { class: 'muted small' }, e.finish_time ? `finished ${fmtTime(e.finish_time)}` : 'running')))) : null);
  }));
}
