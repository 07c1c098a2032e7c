// Login: a Keystone password login scoped to a project.

import { login } from '../api.js';
import { h } from '../dom.js';

export async function render({ root, query, navigate }) {
  const error = h('p', { class: 'alert alert-error', role: 'alert', id: 'login-error', hidden: true });
  const user = h('input', { id: 'login-user', name: 'username', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false' });
  const password = h('input', { id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const project = h('input', { id: 'login-project', name: 'project', autocomplete: 'off', autocapitalize: 'none', spellcheck: 'false' });
  const domain = h('input', { id: 'login-domain', name: 'domain', value: 'Default', autocomplete: 'off' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', id: 'login-submit' }, 'Log in');
  const form = h('form', { class: 'card login-form', novalidate: false, 'aria-describedby': 'login-help' },
    error,
    h('div', { class: 'field' }, h('label', { for: 'login-user' }, 'User name'), user),
    h('div', { class: 'field' }, h('label', { for: 'login-password' }, 'Password'), password),
    h('div', { class: 'field' }, h('label', { for: 'login-project' }, 'Project'), project,
      h('p', { class: 'help', id: 'login-project-help' }, 'Leave empty for your own project.')),
    h('details', { class: 'advanced' }, h('summary', {}, 'Domain'),
      h('div', { class: 'field' }, h('label', { for: 'login-domain' }, 'Domain'), domain)),
    h('div', { class: 'form-buttons' }, submit));
  project.setAttribute('aria-describedby', 'login-project-help');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    submit.disabled = true;
    submit.textContent = 'Logging in…';
    try {
      await login(user.value.trim(), password.value, project.value.trim(), domain.value.trim() || 'Default');
      const next = query.get('next');
      navigate(next && next.startsWith('/') && next !== '/login' ? next : '/overview');
    } catch (err) {
      error.textContent = err.status === 401
        ? 'The user name, password or project is not right.'
        : `Login failed: ${err.message || err}`;
      error.hidden = false;
      password.value = '';
      password.focus();
    } finally {
      submit.disabled = false;
      submit.textContent = 'Log in';
    }
  });
  root.append(
    h('div', { class: 'login' },
      h('h1', {}, 'Log in to Stratus'),
      h('p', { class: 'muted', id: 'login-help' }, 'Use your Stratus (Keystone) credentials. A dev cloud (cloudctl agent -dev) has admin/admin and demo/demo.'),
      form));
  user.focus();
}
