// Instance statuses, their colours, and the lifecycle operations each
// allows (Nova's state rules; the servers have the last word and answer
// 409 to anything else).

import { h } from './dom.js';

const tone = {
  ACTIVE: 'ok',
  BUILD: 'busy', REBUILD: 'busy', REBOOT: 'busy', HARD_REBOOT: 'busy', RESIZE: 'busy',
  MIGRATING: 'busy', PASSWORD: 'busy',
  VERIFY_RESIZE: 'warn', RESCUE: 'warn', UNKNOWN: 'warn',
  SHUTOFF: 'off', PAUSED: 'off', SUSPENDED: 'off', SHELVED: 'off', SHELVED_OFFLOADED: 'off',
  SOFT_DELETED: 'off', DELETED: 'off',
  ERROR: 'bad',
};

// STATUSES are the statuses the filter offers.
export const STATUSES = ['ACTIVE', 'BUILD', 'SHUTOFF', 'ERROR', 'PAUSED', 'SUSPENDED', 'REBOOT', 'HARD_REBOOT',
  'RESIZE', 'VERIFY_RESIZE', 'MIGRATING', 'REBUILD', 'RESCUE', 'SHELVED', 'SHELVED_OFFLOADED', 'SOFT_DELETED'];

// badge shows a status in its colour, with its text (never colour alone)
// and the task under way.
export function badge(status, task) {
  const s = status || 'UNKNOWN';
  return h('span', { class: `badge badge-${tone[s] || 'warn'}`, 'data-status': s },
    s.replaceAll('_', ' '), task ? h('span', { class: 'badge-task' }, ` · ${task.replaceAll('_', ' ')}`) : null);
}

// hostBadge shows a host's liveness and scheduling state.
export function hostBadge(text, toneName) {
  return h('span', { class: `badge badge-${toneName}` }, text);
}

// POWER_STATES are Nova's power_state names.
export const POWER_STATES = { 0: 'NOSTATE', 1: 'RUNNING', 3: 'PAUSED', 4: 'SHUTDOWN', 6: 'CRASHED', 7: 'SUSPENDED' };

// An operation: label, Nova action (or 'delete'), the statuses it applies
// to, whether it needs an admin, and how to ask for its arguments.
// body(values, server) builds the action's value from the dialog's values.
export const OPERATIONS = [
  { op: 'start', label: 'Start', action: 'os-start', when: ['SHUTOFF'] },
  { op: 'stop', label: 'Stop', action: 'os-stop', when: ['ACTIVE', 'ERROR', 'RESCUE', 'PAUSED', 'SUSPENDED'], danger: true },
  { op: 'reboot', label: 'Reboot', action: 'reboot', when: ['ACTIVE', 'SHUTOFF', 'ERROR', 'PAUSED', 'SUSPENDED', 'REBOOT'],
    fields: [{ name: 'type', label: 'Reboot type', type: 'select', value: 'SOFT',
      options: [{ value: 'SOFT', label: 'Soft (ask the guest OS)' }, { value: 'HARD', label: 'Hard (power cycle)' }] }],
    body: (v) => ({ type: v.type || 'SOFT' }) },
  { op: 'pause', label: 'Pause', action: 'pause', when: ['ACTIVE'] },
  { op: 'unpause', label: 'Unpause', action: 'unpause', when: ['PAUSED'] },
  { op: 'suspend', label: 'Suspend', action: 'suspend', when: ['ACTIVE'] },
  { op: 'resume', label: 'Resume', action: 'resume', when: ['SUSPENDED'] },
  { op: 'rescue', label: 'Rescue', action: 'rescue', when: ['ACTIVE', 'SHUTOFF', 'ERROR'],
    fields: [{ name: 'image', label: 'Rescue image (empty: the instance\'s own)', type: 'text' }],
    body: (v) => (v.image ? { rescue_image_ref: v.image } : null) },
  { op: 'unrescue', label: 'Unrescue', action: 'unrescue', when: ['RESCUE'] },
  { op: 'rebuild', label: 'Rebuild', action: 'rebuild', when: ['ACTIVE', 'SHUTOFF', 'ERROR'], danger: true,
    fields: [{ name: 'image', label: 'Image', type: 'text', required: true, help: 'The disk is re-created from this image.' }],
    defaults: (s) => ({ image: (s.image && s.image.id) || '' }),
    body: (v) => ({ imageRef: v.image }) },
  { op: 'resize', label: 'Resize', action: 'resize', when: ['ACTIVE', 'SHUTOFF'],
    fields: [{ name: 'flavor', label: 'New flavor', type: 'select', required: true, options: [] }],
    needsFlavors: true,
    body: (v) => ({ flavorRef: v.flavor }) },
  { op: 'confirmResize', label: 'Confirm resize', action: 'confirmResize', when: ['VERIFY_RESIZE'] },
  { op: 'revertResize', label: 'Revert resize', action: 'revertResize', when: ['VERIFY_RESIZE'] },
  { op: 'lock', label: 'Lock', action: 'lock', when: '*', unless: (s) => s.locked,
    fields: [{ name: 'reason', label: 'Reason (optional)', type: 'text' }],
    body: (v) => (v.reason ? { locked_reason: v.reason } : null) },
  { op: 'unlock', label: 'Unlock', action: 'unlock', when: '*', unless: (s) => !s.locked },
  { op: 'shelve', label: 'Shelve', action: 'shelve', when: ['ACTIVE', 'SHUTOFF', 'PAUSED', 'SUSPENDED'] },
  { op: 'shelveOffload', label: 'Offload', action: 'shelveOffload', when: ['SHELVED'], admin: true },
  { op: 'unshelve', label: 'Unshelve', action: 'unshelve', when: ['SHELVED', 'SHELVED_OFFLOADED'] },
  { op: 'migrate', label: 'Migrate', action: 'migrate', when: ['ACTIVE', 'SHUTOFF'], admin: true,
    fields: [{ name: 'host', label: 'Destination host (empty: let the scheduler pick)', type: 'text' }],
    body: (v) => (v.host ? { host: v.host } : null) },
  { op: 'live-migrate', label: 'Live migrate', action: 'os-migrateLive', when: ['ACTIVE', 'PAUSED'], admin: true,
    fields: [{ name: 'host', label: 'Destination host (empty: let the scheduler pick)', type: 'text' }],
    body: (v) => ({ host: v.host || null, block_migration: 'auto' }) },
  { op: 'evacuate', label: 'Evacuate', action: 'evacuate', when: ['ACTIVE', 'SHUTOFF', 'ERROR'], admin: true, danger: true,
    unless: (s) => s.host_status === 'UP' || s.host_status === '' || s.host_status === undefined,
    fields: [{ name: 'host', label: 'Destination host (empty: let the scheduler pick)', type: 'text' }],
    body: (v) => (v.host ? { host: v.host } : {}) },
  { op: 'restore', label: 'Restore', action: 'restore', when: ['SOFT_DELETED'] },
  { op: 'forceDelete', label: 'Delete now', action: 'forceDelete', when: ['SOFT_DELETED'], danger: true },
  { op: 'delete', label: 'Delete', action: 'delete', when: '*', unless: (s) => s.status === 'SOFT_DELETED' || s.status === 'DELETED', danger: true },
];

// operationsFor lists the operations that apply to a server for this user.
export function operationsFor(server, isAdmin) {
  return OPERATIONS.filter((o) => (o.when === '*' || o.when.includes(server.status))
    && (!o.admin || isAdmin) && !(o.unless && o.unless(server)));
}

// BULK are the operations the instance list offers on a selection.
export const BULK = ['start', 'stop', 'reboot', 'delete'].map((op) => OPERATIONS.find((o) => o.op === op));
