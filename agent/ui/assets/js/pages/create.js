// Create instance: name, flavor, image, network, key pair and count,
// booted through the Compute API (POST /servers) in the user's project.

import { compute, service } from '../api.js';
import { h } from '../dom.js';
import { notify } from '../notice.js';

function field(id, label, input, help) {
  if (help) input.setAttribute('aria-describedby', `${id}-help`);
  return h('div', { class: 'field' }, h('label', { for: id }, label), input,
    help ? h('p', { class: 'help', id: `${id}-help` }, help) : null);
}

export async function render({ root, signal, navigate }) {
  const [flavors, images, networks, keypairs] = await Promise.all([
    compute('GET', '/flavors/detail', { signal }).then((d) => d.flavors || []),
    service('image', 'GET', '/v2/images', { signal }).then((d) => (d ? d.images || [] : null)).catch(() => null),
    service('network', 'GET', '/v2.0/networks', { signal }).then((d) => (d ? d.networks || [] : null)).catch(() => null),
    compute('GET', '/os-keypairs', { signal }).then((d) => (d.keypairs || []).map((k) => k.keypair)).catch(() => []),
  ]);
  if (signal.aborted) return;

  const name = h('input', { id: 'create-name', name: 'name', required: true, maxlength: 255, autocomplete: 'off', spellcheck: 'false' });
  const flavor = h('select', { id: 'create-flavor', name: 'flavor', required: true },
    [...flavors].sort((a, b) => a.ram - b.ram || a.name.localeCompare(b.name)).map((f) => h('option', { value: f.id, 'data-name': f.name },
      `${f.name} — ${f.vcpus} vCPU, ${f.ram >= 1024 ? `${f.ram / 1024} GiB` : `${f.ram} MiB`} RAM, ${f.disk} GiB disk`)));
  let image;
  if (images && images.length) {
    const active = images.filter((i) => !i.status || i.status === 'active');
    image = h('select', { id: 'create-image', name: 'image', required: true },
      (active.length ? active : images).map((i) => h('option', { value: i.id, 'data-name': i.name || i.id }, i.name || i.id)));
  } else {
    image = h('input', { id: 'create-image', name: 'image', required: true, value: 'cirros', autocomplete: 'off' });
  }
  const network = h('select', { id: 'create-network', name: 'network' },
    h('option', { value: 'auto' }, 'Automatic'),
    h('option', { value: 'none' }, 'No network'),
    (networks || []).map((n) => h('option', { value: `net:${n.id}` }, n.name || n.id)));
  const keypair = h('select', { id: 'create-keypair', name: 'keypair' },
    h('option', { value: '' }, 'None'),
    keypairs.map((k) => h('option', { value: k.name }, k.name)));
  const count = h('input', { id: 'create-count', name: 'count', type: 'number', min: 1, max: 100, value: 1, required: true, inputmode: 'numeric' });
  const error = h('div', { class: 'alert alert-error', role: 'alert', id: 'create-error', hidden: true, tabindex: '-1' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', id: 'create-submit' }, 'Create');

  const form = h('form', { class: 'card create-form', id: 'create-form' },
    error,
    field('create-name', 'Name', name),
    field('create-flavor', 'Flavor', flavor),
    field('create-image', 'Image', image, images ? null : 'The image\'s id or name.'),
    field('create-network', 'Network', network, networks ? null : 'Networks arrive with the Networking service; "Automatic" and "No network" are what the Compute API takes until then.'),
    field('create-keypair', 'Key pair', keypair, keypairs.length ? null : 'You have no key pairs yet (openstack keypair create).'),
    field('create-count', 'Count', count, 'How many instances to boot; several are named name-1, name-2, …'),
    h('div', { class: 'form-buttons' }, submit, h('a', { class: 'btn', href: '#/instances' }, 'Cancel')));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    const n = Number(count.value);
    if (!name.value.trim()) {
      showError('Give the instance a name.');
      name.focus();
      return;
    }
    if (!Number.isInteger(n) || n < 1) {
      showError('The count must be a whole number of at least 1.');
      count.focus();
      return;
    }
    const server = {
      name: name.value.trim(),
      flavorRef: flavor.value,
      imageRef: image.value.trim(),
      networks: network.value.startsWith('net:') ? [{ uuid: network.value.slice(4) }] : network.value,
      min_count: n,
      max_count: n,
    };
    if (keypair.value) server.key_name = keypair.value;
    submit.disabled = true;
    submit.textContent = 'Creating…';
    try {
      const res = await compute('POST', '/servers', { body: { server } });
      notify(n === 1 ? `Creating ${server.name}.` : `Creating ${n} instances named ${server.name}-1 … ${server.name}-${n}.`, 'ok');
      if (n === 1 && res && res.server && res.server.id) {
        navigate(`/instances/${encodeURIComponent(res.server.id)}`);
      } else {
        navigate(`/instances?q=${encodeURIComponent(server.name)}`);
      }
    } catch (err) {
      showError(`The instance was not created: ${err.message}`);
    } finally {
      submit.disabled = false;
      submit.textContent = 'Create';
    }
  });

  function showError(msg) {
    error.textContent = msg;
    error.hidden = false;
    error.focus();
  }

  root.append(h('div', { class: 'page-head' }, h('h1', {}, 'Create instance')), form);
}
