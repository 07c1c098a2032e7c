// Overview: the project's instances and quota for everyone; for admins
// the cluster's health too — servers and leader, the Raft index, hosts up
// and down, capacity used against total per resource class; live.

import { compute } from '../api.js';
import { h, replace } from '../dom.js';
import { watch, watchInstances } from '../live.js';
import { badge, hostBadge } from '../status.js';
import { capacityMeters } from './hosts.js';

function stat(label, value, id) {
  return h('div', { class: 'stat', id }, h('div', { class: 'stat-value' }, String(value)), h('div', { class: 'stat-label' }, label));
}

export async function render({ root, signal, session }) {
  const cluster = h('div', { id: 'cluster' }, h('p', { class: 'loading' }, 'Loading…'));
  const mine = h('div', { id: 'project-summary' }, h('p', { class: 'loading' }, 'Loading…'));
  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Overview')));
  if (session.isAdmin) {
    root.append(h('section', { class: 'card', 'aria-labelledby': 'cluster-h' }, h('h2', { id: 'cluster-h' }, 'Cluster health'), cluster));
  }
  root.append(h('section', { class: 'card', 'aria-labelledby': 'proj-h' },
    h('h2', { id: 'proj-h' }, session.isAdmin ? 'Instances (all projects)' : `Project ${session.project ? session.project.name : ''}`), mine));

  if (session.isAdmin) {
    // Hosts change as instances land on them; servers and leader are
    // re-read at least every 10 seconds.
    watch('/status/cluster', (c) => drawCluster(cluster, c), {
      signal,
      wait: '10s',
      onError: (e) => {
        // Keep retrying, and say why nothing is shown.
        replace(cluster, h('p', { class: 'alert alert-error', role: 'alert' }, `The cluster's status cannot be read: ${e.message}`));
        return false;
      },
    });
  }
  watchInstances(async () => {
    const qs = session.isAdmin ? '?all_tenants=1' : '';
    const [servers, limits] = await Promise.all([
      compute('GET', `/servers/detail${qs}`, { signal }),
      session.isAdmin ? {} : compute('GET', '/limits', { signal }),
    ]);
    if (signal.aborted) return;
    drawProject(mine, servers.servers || [], (limits.limits || {}).absolute || {}, session.isAdmin);
  }, { signal });
}

function drawCluster(el, c) {
  const leader = c.Leader ? `${c.LeaderName || '?'} (${c.Leader})` : 'none — the cluster has no leader';
  const raft = c.Raft || {};
  replace(el,
    h('div', { class: 'stats' },
      stat('Servers', c.Servers.length, 'stat-servers'),
      stat('Leader', c.LeaderName || 'none', 'stat-leader'),
      stat('Raft index', c.Index, 'stat-index'),
      stat('Hosts up', `${c.Hosts.Up}/${c.Hosts.Total}`, 'stat-hosts-up'),
      stat('Hosts down', c.Hosts.Down, 'stat-hosts-down'),
      stat('Disabled', c.Hosts.Disabled, 'stat-hosts-disabled')),
    h('p', {}, h('strong', {}, 'Leader: '), leader, c.Region ? ` · region ${c.Region}` : ''),
    c.RaftError ? h('p', { class: 'alert alert-error', role: 'alert' }, `Raft: ${c.RaftError}`) : null,
    c.Raft ? h('p', { class: 'muted small' },
      `This agent's server: ${raft.state || '?'}, term ${raft.term || '?'}, applied ${raft.applied_index || '?'}, ` +
      `committed ${raft.commit_index || '?'}, last log ${raft.last_log_index || '?'}`) : null,
    h('div', { class: 'table-wrap' }, h('table', { class: 'table', id: 'servers-table' },
      h('caption', {}, 'Servers'),
      h('thead', {}, h('tr', {}, ['Name', 'Address', 'Gossip', 'Role'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, c.Servers.map((s) => h('tr', {},
        h('td', { 'data-label': 'Name' }, s.Name || s.ID),
        h('td', { 'data-label': 'Address', class: 'mono' }, s.Address),
        h('td', { 'data-label': 'Gossip' }, hostBadge(s.Status, s.Status === 'alive' ? 'ok' : s.Status === 'unknown' ? 'warn' : 'bad')),
        h('td', { 'data-label': 'Role' }, s.Leader ? 'leader' : s.Voter ? 'follower (voter)' : 'non-voter')))))),
    h('h3', {}, 'Capacity of the hosts that are up'),
    capacityMeters(c.Capacity),
    h('p', {}, h('a', { href: '#/hosts' }, 'Hosts →'), ' ', h('a', { href: '#/evaluations' }, 'Scheduling →')));
}

function drawProject(el, servers, abs, isAdmin) {
  const counts = {};
  for (const s of servers) counts[s.status] = (counts[s.status] || 0) + 1;
  const statuses = Object.keys(counts).sort();
  const quota = (used, max, label) => (max === undefined ? null
    : h('li', {}, `${label}: ${used ?? 0} of ${max < 0 ? 'unlimited' : max}`));
  replace(el,
    h('div', { class: 'stats' },
      stat('Instances', servers.length, 'stat-instances'),
      statuses.map((st) => h('a', { class: 'stat stat-link', href: `#/instances?status=${encodeURIComponent(st)}` },
        h('div', { class: 'stat-value' }, String(counts[st])), h('div', { class: 'stat-label' }, badge(st))))),
    isAdmin ? null : h('div', {},
      h('h3', {}, 'Quota'),
      h('ul', { class: 'plain' },
        quota(abs.totalInstancesUsed, abs.maxTotalInstances, 'Instances'),
        quota(abs.totalCoresUsed, abs.maxTotalCores, 'vCPUs'),
        quota(abs.totalRAMUsed, abs.maxTotalRAMSize, 'RAM (MiB)'))),
    h('p', {}, h('a', { href: '#/instances' }, 'Instances →'), ' ', h('a', { href: '#/create' }, 'Create an instance →')));
}
