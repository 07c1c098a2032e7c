// Running lifecycle operations through the Compute API, each after a
// confirmation.

import { compute, serverAction } from './api.js';
import { confirmDialog } from './dialog.js';
import { notify } from './notice.js';

// flavorOptions lists the flavors for a select.
async function flavorOptions(current) {
  const data = await compute('GET', '/flavors/detail');
  return (data.flavors || [])
    .filter((f) => f.name !== current)
    .map((f) => ({ value: f.id, label: `${f.name} — ${f.vcpus} vCPU, ${f.ram} MiB, ${f.disk} GiB` }));
}

// perform sends one operation for one server and answers an error
// message or ''.
export async function perform(o, server, values = {}) {
  try {
    if (o.action === 'delete') {
      await compute('DELETE', `/servers/${encodeURIComponent(server.id)}`);
    } else {
      const value = o.body ? o.body(values, server) : null;
      await serverAction(server.id, o.action, value);
    }
    return '';
  } catch (e) {
    return e.message || String(e);
  }
}

// runOperation confirms and performs an operation on one server; it
// answers true when the operation was accepted.
export async function runOperation(o, server) {
  let fields = (o.fields || []).map((f) => ({ ...f }));
  const defaults = o.defaults ? o.defaults(server) : {};
  for (const f of fields) {
    if (defaults[f.name] !== undefined) f.value = defaults[f.name];
  }
  if (o.needsFlavors) {
    const current = server.flavor && server.flavor.original_name;
    fields = fields.map((f) => (f.name === 'flavor' ? { ...f, options: [] } : f));
    try {
      fields.find((f) => f.name === 'flavor').options = await flavorOptions(current);
    } catch (e) {
      notify(`Could not list flavors: ${e.message}`, 'error');
      return false;
    }
  }
  const values = await confirmDialog({
    title: `${o.label} ${server.name}?`,
    message: describe(o, server),
    fields,
    confirmLabel: o.label,
    danger: !!o.danger,
  });
  if (!values) return false;
  const err = await perform(o, server, values);
  if (err) {
    notify(`${o.label} ${server.name} failed: ${err}`, 'error');
    return false;
  }
  notify(`${o.label}: request accepted for ${server.name}.`, 'ok');
  return true;
}

// runBulk confirms once and performs an operation on several servers.
export async function runBulk(o, servers) {
  let fields = (o.fields || []).map((f) => ({ ...f }));
  const names = servers.map((s) => s.name).join(', ');
  const values = await confirmDialog({
    title: `${o.label} ${servers.length} instance${servers.length === 1 ? '' : 's'}?`,
    message: `${describe(o)} Instances: ${names}.`,
    fields,
    confirmLabel: `${o.label} ${servers.length}`,
    danger: !!o.danger,
  });
  if (!values) return false;
  const errors = [];
  await Promise.all(servers.map(async (s) => {
    const err = await perform(o, s, values);
    if (err) errors.push(`${s.name}: ${err}`);
  }));
  if (errors.length) {
    notify(`${o.label}: ${servers.length - errors.length} accepted, ${errors.length} refused — ${errors.join('; ')}`, 'error');
  } else {
    notify(`${o.label}: request accepted for ${servers.length} instance${servers.length === 1 ? '' : 's'}.`, 'ok');
  }
  return true;
}

function describe(o) {
  switch (o.op) {
    case 'delete': return 'The instance and its disks are deleted. This cannot be undone.';
    case 'forceDelete': return 'The soft-deleted instance is deleted at once. This cannot be undone.';
    case 'stop': return 'The instance is powered off.';
    case 'rebuild': return 'The instance\'s disk is re-created from an image; its data is lost.';
    case 'evacuate': return 'The instance is rebuilt on another host because its host is down.';
    case 'migrate': return 'The instance is cold-migrated (powered off and moved); confirm the move afterwards.';
    case 'live-migrate': return 'The instance moves to another host while it runs.';
    case 'resize': return 'The instance moves to a new flavor; confirm or revert the resize afterwards.';
    case 'shelve': return 'The instance is powered off and kept; unshelve it to bring it back.';
    default: return `Send ${o.action} to the instance.`;
  }
}
