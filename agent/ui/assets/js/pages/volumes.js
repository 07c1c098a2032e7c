// The instance page's volumes card: the block storage volumes attached
// to the instance (Nova's os-volume_attachments, with names and sizes
// from the Block Storage API), detach after a confirmation, and attach
// one of the project's available volumes. The card is built once per
// page and refreshes itself while an attach or detach is under way.

import { ApiError, compute, service } from '../api.js';
import { confirmDialog } from '../dialog.js';
import { h, replace } from '../dom.js';
import { notify } from '../notice.js';

// settleEvery and settleTries bound how the card follows an attach or a
// detach: it rereads until no volume of the instance is in transit.
const settleEvery = 1000;
const settleTries = 60;

// inTransit are the volume statuses an attach or detach passes through.
const inTransit = new Set(['reserved', 'attaching', 'detaching']);

export function volumesCard(server, { signal } = {}) {
  const id = server.id;
  const list = h('div', { id: 'volumes-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const attachBtn = h('button', { type: 'button', class: 'btn', id: 'volume-attach', onclick: () => attach() }, 'Attach volume');
  const card = h('section', { class: 'card', 'aria-labelledby': 'volumes-h', id: 'volumes-card' },
    h('h2', { id: 'volumes-h' }, 'Volumes'),
    list,
    h('div', { class: 'ops', role: 'group', 'aria-label': 'Volumes' }, attachBtn));
  let volumes = [];
  let storage = true;
  let serverName = server.name;
  let following = false;

  // read answers the instance's attachments and the project's volumes
  // (null when the cloud has no block storage).
  async function read() {
    const att = (await compute('GET', `/servers/${encodeURIComponent(id)}/os-volume_attachments`, { signal })).volumeAttachments || [];
    let vols = null;
    try {
      const data = await service('volumev3', 'GET', '/volumes/detail', { signal });
      vols = data ? data.volumes || [] : null;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
    return { att, vols };
  }

  async function refresh() {
    let att;
    let vols;
    try {
      ({ att, vols } = await read());
    } catch (e) {
      if (signal && signal.aborted) return false;
      replace(list, h('p', { class: 'muted' }, `The instance's volumes could not be read: ${e.message}`));
      return false;
    }
    storage = vols !== null;
    volumes = vols || [];
    const byID = Object.fromEntries(volumes.map((v) => [v.id, v]));
    attachBtn.disabled = !storage;
    if (!att.length) {
      replace(list, h('p', { class: 'muted' }, storage ? 'No volume is attached.' : 'This cloud has no block storage.'));
    } else {
      replace(list, h('div', { class: 'table-wrap' }, h('table', { class: 'table', id: 'volumes-table' },
        h('thead', {}, h('tr', {}, ['Device', 'Volume', 'Size', 'Status', 'Deleted with the instance', ''].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, att.map((a) => {
          const v = byID[a.volumeId] || {};
          return h('tr', { 'data-volume': a.volumeId },
            h('td', { class: 'mono' }, a.device || '—'),
            h('td', {}, v.name || h('span', { class: 'mono' }, a.volumeId)),
            h('td', {}, v.size ? `${v.size} GiB` : '—'),
            h('td', {}, v.status || '—'),
            h('td', {}, a.delete_on_termination ? 'yes' : 'no'),
            h('td', {}, h('button', {
              type: 'button', class: 'btn btn-danger-outline', 'data-detach': a.volumeId,
              onclick: () => detach(a, v),
            }, 'Detach')));
        })))));
    }
    return att.some((a) => inTransit.has((byID[a.volumeId] || {}).status)) ||
      volumes.some((v) => inTransit.has(v.status) && (v.attachments || []).some((x) => x.server_id === id));
  }

  // follow rereads until nothing of the instance's is in transit.
  async function follow() {
    if (following) return;
    following = true;
    try {
      for (let i = 0; i < settleTries && !(signal && signal.aborted); i++) {
        if (!(await refresh())) return;
        await new Promise((r) => setTimeout(r, settleEvery));
      }
    } finally {
      following = false;
    }
  }

  async function attach() {
    // The project's volumes as they are now, not as the last redraw saw
    // them: one made a moment ago must be offered.
    attachBtn.disabled = true;
    try {
      await refresh();
    } finally {
      attachBtn.disabled = !storage;
    }
    const free = volumes.filter((v) => v.status === 'available');
    if (!free.length) {
      notify('No volume of this project is available to attach: create one first (openstack volume create, or cloudctl volume create).', 'error');
      return;
    }
    const values = await confirmDialog({
      title: `Attach a volume to ${serverName}?`,
      message: 'The volume is plugged into the running guest as the next free disk.',
      fields: [{ name: 'volume', label: 'Volume', type: 'select', required: true, value: free[0].id,
        options: free.map((v) => ({ value: v.id, label: `${v.name || v.id} — ${v.size} GiB` })) }],
      confirmLabel: 'Attach',
    });
    if (!values) return;
    try {
      await compute('POST', `/servers/${encodeURIComponent(id)}/os-volume_attachments`,
        { body: { volumeAttachment: { volumeId: values.volume } }, signal });
      notify(`Attaching the volume to ${serverName}.`, 'info');
    } catch (e) {
      notify(`Attach to ${serverName} failed: ${e.message}`, 'error');
    }
    follow();
  }

  async function detach(a, v) {
    const ok = await confirmDialog({
      title: `Detach ${v.name || a.volumeId}?`,
      message: `The volume leaves ${serverName} at once (${a.device}); its data stays on the volume.`,
      confirmLabel: 'Detach',
      danger: true,
    });
    if (!ok) return;
    try {
      await compute('DELETE', `/servers/${encodeURIComponent(id)}/os-volume_attachments/${encodeURIComponent(a.volumeId)}`, { signal });
      notify(`Detaching the volume from ${serverName}.`, 'info');
    } catch (e) {
      notify(`Detach from ${serverName} failed: ${e.message}`, 'error');
    }
    follow();
  }

  // update is called on each redraw of the page: the instance's name
  // may have changed, and its volumes with it.
  card.update = (s) => {
    serverName = s.name;
    if (!following) refresh();
  };
  return card;
}
