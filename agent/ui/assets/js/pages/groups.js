// Instance groups (admins): the HCL instance specs the servers converge
// to, each with its deployment's progress; live.

import { h, replace, timeEl } from '../dom.js';
import { watch } from '../live.js';
import { hostBadge } from '../status.js';

const deploymentTone = { running: 'busy', successful: 'ok', failed: 'bad', stopping: 'busy', stopped: 'off' };

// deploymentBadge shows a deployment's status in its colour.
export function deploymentBadge(d, stopped) {
  if (!d) return hostBadge(stopped ? 'stopped' : 'no deployment', 'off');
  return hostBadge(d.Status, deploymentTone[d.Status] || 'warn');
}

export async function render({ root, signal }) {
  const body = h('tbody');
  root.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Instance groups')),
    h('p', { class: 'muted' }, 'Groups are declared in HCL specs and run with ', h('code', {}, 'cloudctl instance run'),
      '; the servers create, update and replace their members until they match.'),
    h('div', { class: 'table-wrap' }, h('table', { class: 'table', id: 'groups-table' },
      h('caption', { class: 'visually-hidden' }, 'Instance groups'),
      h('thead', {}, h('tr', {}, ['Name', 'Version', 'Deployment', 'Members', 'Submitted'].map((c) => h('th', { scope: 'col' }, c)))),
      body)));

  watch('/groups', (groups) => {
    const list = [...(groups || [])].sort((a, b) => a.Name.localeCompare(b.Name));
    replace(body, list.length ? list.map((g) => {
      const d = g.Deployment;
      return h('tr', { 'data-group': g.Name },
        h('td', { 'data-label': 'Name' }, h('a', { href: `#/groups/${encodeURIComponent(g.Name)}` }, g.Name)),
        h('td', { 'data-label': 'Version' }, String(g.Version)),
        h('td', { 'data-label': 'Deployment' }, deploymentBadge(d, g.Stopped), d && d.Description ? h('div', { class: 'small muted' }, d.Description) : null),
        h('td', { 'data-label': 'Members' }, d
          ? `${d.Running} running, ${d.Healthy} healthy of ${d.Desired}${d.Failed ? `, ${d.Failed} failed` : ''}`
          : `${g.Desired} desired`),
        h('td', { 'data-label': 'Submitted' }, timeEl(g.SubmitTime)));
    }) : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No instance groups yet.')));
  }, { signal });
}
