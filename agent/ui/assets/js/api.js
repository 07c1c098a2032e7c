// Clients of the agent's HTTP APIs: identity (Keystone v3), the Compute
// API (Nova v2.1, with the user's token, so project policy applies) and
// the native /v1 API (admin views), all with the session's token.

const SESSION_KEY = 'stratus.session';

// NOVA_MICROVERSION is the Compute API version the UI speaks: embedded
// flavors (2.47), instance action events for projects (2.51), lock
// reasons (2.73).
export const NOVA_MICROVERSION = '2.96';

// ApiError is a failed call: its HTTP status and the API's own message.
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

// errorMessage digs the message out of any of the three APIs' error
// bodies: native {"error","kind"}, Keystone {"error":{"message"}}, Nova
// {"itemNotFound":{"message","code"}}.
function errorMessage(body) {
  if (!body || typeof body !== 'object') return '';
  if (typeof body.error === 'string') return body.error;
  if (body.error && typeof body.error.message === 'string') return body.error.message;
  for (const value of Object.values(body)) {
    if (value && typeof value.message === 'string') return value.message;
  }
  return '';
}

// request sends one call and decodes the answer: {status, headers, data}.
// A non-2xx answer throws an ApiError.
export async function request(method, path, { body, headers = {}, signal } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, signal, cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  let data = null;
  const text = await resp.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!resp.ok) {
    throw new ApiError(resp.status, errorMessage(data) || `${resp.status} ${resp.statusText}`, data);
  }
  return { status: resp.status, headers: resp.headers, data };
}

// ---- Session ----------------------------------------------------------

// session is the logged-in user, kept in sessionStorage (per tab, gone
// when the tab closes): {token, expiresAt, user, project, roles, isAdmin,
// endpoints}.
export const session = {
  get() {
    let s = null;
    try {
      s = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
    } catch {
      s = null;
    }
    if (s && s.expiresAt && Date.parse(s.expiresAt) <= Date.now()) {
      this.clear();
      return null;
    }
    return s;
  },
  save(s) {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
  },
  clear() {
    sessionStorage.removeItem(SESSION_KEY);
  },
};

// expired is called when an API refuses the token (401): the session is
// dropped and the app returns to the login page.
function expired() {
  session.clear();
  window.dispatchEvent(new CustomEvent('stratus:session-expired'));
}

const identity = '/identity/v3';

async function issueToken(auth) {
  const res = await request('POST', `${identity}/auth/tokens`, { body: { auth } });
  return { id: res.headers.get('X-Subject-Token'), token: res.data.token };
}

// login authenticates with a password and scopes the token to a project:
// the one named, else the user's project of the same name, else the
// first the user has a role on.
export async function login(username, password, projectName, domain = 'Default') {
  const identityPart = {
    methods: ['password'],
    password: { user: { name: username, domain: { name: domain }, password } },
  };
  let issued;
  if (projectName) {
    issued = await issueToken({ identity: identityPart, scope: { project: { name: projectName, domain: { name: domain } } } });
  } else {
    const unscoped = await issueToken({ identity: identityPart });
    const res = await request('GET', `${identity}/auth/projects`, { headers: { 'X-Auth-Token': unscoped.id } });
    const projects = (res.data && res.data.projects) || [];
    const pick = projects.find((p) => p.name === username) || projects[0];
    if (!pick) throw new ApiError(401, `User ${username} has no role on any project.`);
    issued = await issueToken({ identity: { methods: ['token'], token: { id: unscoped.id } }, scope: { project: { id: pick.id } } });
  }
  const t = issued.token;
  const roles = (t.roles || []).map((r) => r.name);
  const s = {
    token: issued.id,
    expiresAt: t.expires_at,
    user: { id: t.user.id, name: t.user.name },
    project: t.project ? { id: t.project.id, name: t.project.name } : null,
    roles,
    isAdmin: roles.includes('admin'),
    endpoints: endpoints(t.catalog || []),
  };
  session.save(s);
  return s;
}

// endpoints maps each catalog service type to the path of its public
// endpoint on this agent.
function endpoints(catalog) {
  const out = {};
  for (const svc of catalog) {
    const ep = (svc.endpoints || []).find((e) => e.interface === 'public') || (svc.endpoints || [])[0];
    if (!ep) continue;
    try {
      out[svc.type] = new URL(ep.url, location.href).pathname.replace(/\/$/, '');
    } catch {
      /* not a URL: leave the service out */
    }
  }
  return out;
}

// logout revokes the token and forgets the session.
export async function logout() {
  const s = session.get();
  session.clear();
  if (!s) return;
  try {
    await request('DELETE', `${identity}/auth/tokens`, { headers: { 'X-Auth-Token': s.token, 'X-Subject-Token': s.token } });
  } catch {
    /* the token is forgotten either way */
  }
}

// ---- Compute API ---------------------------------------------------------

// authed calls a token-protected API with the session's token.
async function authed(method, path, opts = {}) {
  const s = session.get();
  if (!s) {
    expired();
    throw new ApiError(401, 'Not logged in.');
  }
  try {
    return await request(method, path, { ...opts, headers: { ...(opts.headers || {}), 'X-Auth-Token': s.token } });
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) expired();
    throw e;
  }
}

// compute calls the Compute API at the UI's microversion.
export async function compute(method, path, opts = {}) {
  const s = session.get();
  const base = (s && s.endpoints && s.endpoints.compute) || '/compute/v2.1';
  const res = await authed(method, base + path, {
    ...opts,
    headers: { 'OpenStack-API-Version': `compute ${NOVA_MICROVERSION}`, ...(opts.headers || {}) },
  });
  return res.data;
}

// service calls another catalog service (image, network) by type, or
// answers null when the catalog has none.
export async function service(type, method, path, opts = {}) {
  const s = session.get();
  const base = s && s.endpoints && s.endpoints[type];
  if (!base) return null;
  const res = await authed(method, base + path, opts);
  return res.data;
}

// serverAction posts one Nova server action: serverAction(id, 'os-stop', null).
export function serverAction(id, name, value = null, opts = {}) {
  return compute('POST', `/servers/${encodeURIComponent(id)}/action`, { ...opts, body: { [name]: value } });
}

// ---- Native /v1 API ------------------------------------------------------

// v1 reads or writes the native API with the session's token (it
// requires one unless the agent runs with ACLs off, as dev mode does);
// reads answer {data, index}.
export async function v1(method, path, opts = {}) {
  const res = await authed(method, '/v1' + path, opts);
  return { data: res.data, index: Number(res.headers.get('X-Stratus-Index') || 0) };
}
