// The Stratus web UI: a hash router over a few pages, the top bar and the
// session. Pages render into <main> and get an AbortSignal that ends
// their live updates when the user leaves them.

import { session, logout } from './api.js';
import { h, replace, $ } from './dom.js';
import { onLiveState } from './live.js';
import { clearNotice, notify } from './notice.js';
import * as loginPage from './pages/login.js';
import * as overviewPage from './pages/overview.js';
import * as instancesPage from './pages/instances.js';
import * as instancePage from './pages/instance.js';
import * as createPage from './pages/create.js';
import * as hostsPage from './pages/hosts.js';
import * as evaluationsPage from './pages/evaluations.js';
import * as groupsPage from './pages/groups.js';
import * as groupPage from './pages/group.js';

// routes: path pattern, page module, title, nav label, admin only.
const routes = [
  { re: /^\/login$/, page: loginPage, title: 'Log in', public: true },
  { re: /^\/overview$/, page: overviewPage, title: 'Overview', nav: 'Overview', href: '/overview' },
  { re: /^\/instances$/, page: instancesPage, title: 'Instances', nav: 'Instances', href: '/instances' },
  { re: /^\/instances\/([^/]+)$/, page: instancePage, title: 'Instance' },
  { re: /^\/create$/, page: createPage, title: 'Create instance', nav: 'Create', href: '/create' },
  { re: /^\/hosts$/, page: hostsPage, title: 'Hosts', nav: 'Hosts', href: '/hosts', admin: true },
  { re: /^\/evaluations$/, page: evaluationsPage, title: 'Scheduling', nav: 'Scheduling', href: '/evaluations', admin: true },
  { re: /^\/groups$/, page: groupsPage, title: 'Instance groups', nav: 'Groups', href: '/groups', admin: true },
  { re: /^\/groups\/([^/]+)$/, page: groupPage, title: 'Instance group', admin: true },
];

let controller = null;

// parseHash splits "#/instances?status=ERROR" into path and query.
function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/overview';
  const [path, qs] = raw.split('?');
  return { path: path || '/overview', query: new URLSearchParams(qs || '') };
}

// navigate goes to a UI path ("/instances").
export function navigate(path) {
  if (location.hash === '#' + path) {
    render();
  } else {
    location.hash = '#' + path;
  }
}

function renderNav(s, path) {
  const nav = $('#nav');
  const toggle = $('#nav-toggle');
  const sess = $('#session');
  if (!s) {
    nav.hidden = true;
    toggle.hidden = true;
    sess.hidden = true;
    return;
  }
  nav.hidden = false;
  toggle.hidden = false;
  sess.hidden = false;
  const links = routes.filter((r) => r.nav && (!r.admin || s.isAdmin)).map((r) => {
    const { href } = r;
    const current = path === href || path.startsWith(href + '/');
    return h('li', {}, h('a', { href: '#' + href, 'aria-current': current ? 'page' : null }, r.nav));
  });
  replace($('#nav-links'), links);
  replace($('#session-user'),
    h('span', { class: 'who' }, s.user.name),
    h('span', { class: 'muted' }, ` · project ${s.project ? s.project.name : '—'}`),
    s.isAdmin ? h('span', { class: 'role-admin' }, 'admin') : null);
}

async function render() {
  if (controller) controller.abort();
  controller = new AbortController();
  const { signal } = controller;
  const { path, query } = parseHash();
  const s = session.get();
  closeMenu();
  if (!s && path !== '/login') {
    location.replace('#/login' + (path && path !== '/overview' ? `?next=${encodeURIComponent(path)}` : ''));
    return;
  }
  if (s && path === '/login') {
    location.replace('#/overview');
    return;
  }
  renderNav(s, path);
  const main = $('#main');
  let params = [];
  const route = routes.find((r) => {
    const m = path.match(r.re);
    if (m) params = m.slice(1).map(decodeURIComponent);
    return !!m;
  });
  main.replaceChildren();
  if (!route) {
    document.title = 'Not found · Stratus';
    main.append(h('h1', { tabindex: '-1' }, 'Page not found'), h('p', {}, h('a', { href: '#/overview' }, 'Go to the overview')));
    focusHeading(main);
    return;
  }
  document.title = `${route.title} · Stratus`;
  if (route.admin && !s.isAdmin) {
    main.append(h('h1', { tabindex: '-1' }, route.title),
      h('p', { class: 'alert alert-info' }, 'This page is for administrators. Your role in this project does not include it.'));
    focusHeading(main);
    return;
  }
  try {
    await route.page.render({ root: main, signal, session: s, params, query, navigate });
  } catch (e) {
    if (signal.aborted) return;
    main.append(h('p', { class: 'alert alert-error', role: 'alert' }, `This page could not be loaded: ${e.message || e}`));
  }
  if (!signal.aborted) focusHeading(main);
}

let firstRender = true;

// focusHeading moves focus to the page's heading after navigation, so
// keyboard and screen reader users start at the new content.
function focusHeading(main) {
  if (firstRender) {
    firstRender = false;
    return;
  }
  const h1 = main.querySelector('h1');
  if (h1) {
    h1.setAttribute('tabindex', '-1');
    h1.focus({ preventScroll: false });
  }
}

function closeMenu() {
  const nav = $('#nav');
  const toggle = $('#nav-toggle');
  if (nav) nav.classList.remove('open');
  if (toggle) toggle.setAttribute('aria-expanded', 'false');
}

function init() {
  window.addEventListener('hashchange', () => {
    clearNotice(1500);
    render();
  });
  window.addEventListener('stratus:session-expired', () => {
    notify('Your session has ended. Log in again.', 'info');
    navigate('/login');
  });
  // The skip link must not change the hash, which is the route.
  $('.skip-link').addEventListener('click', (e) => {
    e.preventDefault();
    $('#main').focus();
  });
  $('#logout').addEventListener('click', async () => {
    await logout();
    notify('Logged out.', 'info');
    navigate('/login');
  });
  $('#nav-toggle').addEventListener('click', () => {
    const nav = $('#nav');
    const open = !nav.classList.contains('open');
    nav.classList.toggle('open', open);
    $('#nav-toggle').setAttribute('aria-expanded', String(open));
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') closeMenu();
  });
  const live = $('#live');
  onLiveState((ok) => {
    live.hidden = false;
    live.classList.toggle('live-down', !ok);
    $('#live-text').textContent = ok ? 'Live' : 'Reconnecting…';
  });
  render();
}

init();
