// One instance group (admins): its spec, deployment progress, members and
// versions with what each changed; stop and revert after a confirmation;
// live.

import { ApiError, v1 } from '../api.js';
import { confirmDialog } from '../dialog.js';
import { h, replace, meter, timeEl } from '../dom.js';
import { watch } from '../live.js';
import { notify } from '../notice.js';
import { badge } from '../status.js';
import { deploymentBadge } from './groups.js';

function specFacts(spec) {
  if (!spec) return [];
  const p = spec.Placement;
  return [
    ['Count', String(spec.Count)],
    ['Flavor', spec.Flavor || '—'],
    ['Image', spec.Image || '—'],
    ['Availability zone', spec.AZ || 'any'],
    ['Key pair', spec.KeyName || 'none'],
    ['Networks', (spec.Networks || []).map((n) => n.Name + (n.FixedIP ? ` (${n.FixedIP})` : '')).join(', ') || 'none'],
    ['Placement', p ? `${p.Policy}${p.MaxPerHost ? `, at most ${p.MaxPerHost} per host` : ''}` : 'none'],
    ['Constraints', (spec.Constraints || []).map((c) => [c.Attribute, c.Operator, c.Value].filter(Boolean).join(' ')).join('; ') || 'none'],
  ];
}

export async function render({ root, signal, params }) {
  const name = params[0];
  const path = `/groups/${encodeURIComponent(name)}`;
  const head = h('div', { class: 'page-head' }, h('h1', {}, name));
  const body = h('div', {}, h('p', { class: 'loading' }, 'Loading…'));
  const versions = h('div', { id: 'group-versions' });
  root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/groups' }, '← Instance groups')), head, body,
    h('section', { class: 'card', 'aria-labelledby': 'gv-h' }, h('h2', { id: 'gv-h' }, 'Versions'), versions));
  let current = null;

  // gone ends the watches when the group is removed (a purged stop).
  function gone(e) {
    if (!(e instanceof ApiError && e.status === 404)) return false;
    replace(head, h('h1', {}, name), h('span', { class: 'badge badge-off' }, 'removed'));
    replace(body, h('p', { class: 'alert alert-info' }, `Instance group ${name} was removed.`));
    return true;
  }

  async function act(kind) {
    let values;
    if (kind === 'stop') {
      values = await confirmDialog({ title: `Stop ${name}?`, message: 'Every member of the group is deleted.',
        fields: [{ name: 'purge', label: 'Also remove the group once its members are gone', type: 'checkbox' }],
        confirmLabel: 'Stop', danger: true });
    } else {
      const options = (current || []).filter((v) => v.Version !== (current[0] || {}).Version)
        .map((v) => ({ value: String(v.Version), label: `version ${v.Version}` }));
      if (!options.length) {
        notify('There is no earlier version to revert to.', 'info');
        return;
      }
      values = await confirmDialog({ title: `Revert ${name}?`, message: 'The chosen version\'s spec becomes a new version, and the members converge to it.',
        fields: [{ name: 'version', label: 'Version', type: 'select', options, value: options[0].value }], confirmLabel: 'Revert' });
    }
    if (!values) return;
    try {
      const bodyJSON = kind === 'stop' ? { Purge: !!values.purge } : { Version: Number(values.version) };
      await v1('POST', `${path}/${kind}`, { body: bodyJSON });
      notify(`${kind === 'stop' ? 'Stop' : 'Revert'}: ${name} accepted.`, 'ok');
    } catch (e) {
      notify(`${kind} ${name} failed: ${e.message}`, 'error');
    }
  }

  // A group that does not exist answers 404: say so, and watch nothing.
  try {
    await v1('GET', path, { signal });
  } catch (e) {
    if (signal.aborted) return;
    if (e instanceof ApiError && e.status === 404) {
      replace(head, h('h1', {}, 'Instance group not found'));
      replace(body, h('p', { class: 'alert alert-info' }, `No instance group ${name}.`));
      versions.closest('section').remove();
      return;
    }
    throw e;
  }

  watch(path, (data) => {
    const g = data.Group || {};
    const d = data.Deployment;
    replace(head, h('h1', {}, name), deploymentBadge(d, g.Stopped));
    const members = [...(data.Members || [])].sort((a, b) => a.Name.localeCompare(b.Name));
    replace(body,
      h('div', { class: 'grid-2' },
        h('section', { class: 'card', 'aria-labelledby': 'gd-h' },
          h('h2', { id: 'gd-h' }, `Deployment of version ${d ? d.Version : g.Version}`),
          d ? [
            d.Description ? h('p', {}, d.Description) : null,
            h('div', { class: 'meters' },
              meter('Placed', d.Placed, d.Desired, `${d.Placed} of ${d.Desired}`, true),
              meter('Running', d.Running, d.Desired, `${d.Running} of ${d.Desired}`, true),
              meter('Updated', d.Updated, d.Desired, `${d.Updated} of ${d.Desired}`, true),
              meter('Healthy', d.Healthy, d.Desired, `${d.Healthy} of ${d.Desired}`, true)),
            d.Failed ? h('p', { class: 'alert alert-error' }, `${d.Failed} member${d.Failed === 1 ? '' : 's'} failed.`) : null,
            h('p', { class: 'small muted' }, 'Started ', timeEl(d.StartedAt), ', updated ', timeEl(d.UpdatedAt)),
          ] : h('p', { class: 'muted' }, 'No deployment.'),
          h('div', { class: 'ops', role: 'group', 'aria-label': `Actions on ${name}` },
            g.Stopped ? null : h('button', { type: 'button', class: 'btn btn-danger-outline', 'data-op': 'group-stop', onclick: () => act('stop') }, 'Stop'),
            h('button', { type: 'button', class: 'btn', 'data-op': 'group-revert', onclick: () => act('revert') }, 'Revert…'))),
        h('section', { class: 'card', 'aria-labelledby': 'gs-h' },
          h('h2', { id: 'gs-h' }, 'Spec'),
          h('dl', { class: 'facts' }, specFacts(g.Spec).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])))),
      h('section', { class: 'card', 'aria-labelledby': 'gm-h' },
        h('h2', { id: 'gm-h' }, `Members (${members.length})`),
        members.length ? h('ul', { class: 'plain' }, members.map((i) => h('li', {},
          h('a', { href: `#/instances/${encodeURIComponent(i.ID)}` }, i.Name), ' ', badge(i.Status, i.TaskState))))
          : h('p', { class: 'muted' }, 'None.')));
  }, { signal, onError: gone });

  watch(`${path}/versions`, (list) => {
    current = [...(list || [])].sort((a, b) => b.Version - a.Version);
    replace(versions, current.length ? h('ol', { class: 'timeline' }, current.map((v) => h('li', { class: 'tl-item', 'data-version': v.Version },
      h('div', { class: 'tl-head' }, h('strong', {}, `Version ${v.Version}`),
        v.Stopped ? h('span', { class: 'badge badge-off' }, 'stop') : null,
        v.RevertedFrom ? h('span', { class: 'badge badge-busy' }, `revert of ${v.RevertedFrom}`) : null,
        h('span', { class: 'muted small' }, timeEl(v.SubmitTime))),
      (v.Diff || []).length ? h('ul', { class: 'tl-events' }, v.Diff.map((f) => h('li', {},
        h('span', { class: 'mono' }, f.Name), ': ', f.Old || '∅', ' → ', f.New || '∅',
        f.Effect ? h('span', { class: 'muted small' }, ` (${f.Effect})`) : null)))
        : h('p', { class: 'muted small' }, v.Version === 1 ? 'First version.' : 'No field changed.'))))
      : h('p', { class: 'muted' }, 'No versions.'));
  }, { signal, onError: gone });
}
