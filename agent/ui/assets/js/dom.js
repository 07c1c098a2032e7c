// DOM helpers. Everything the UI shows is built with h(), which sets
// text as text: data from the APIs is never parsed as HTML.

// h creates an element: h('a', {href: '#/x', class: 'btn'}, 'text', child).
// Attributes: class, text, on<event> (a function), dataset (an object),
// boolean values (true sets, false/null/undefined omits), anything else
// as a string attribute.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2).toLowerCase(), value);
      } else if (key === 'dataset') {
        Object.assign(el.dataset, value);
      } else if (key === 'text') {
        el.textContent = String(value);
      } else if (key === 'value' && 'value' in el) {
        el.value = value;
      } else if (value === true) {
        el.setAttribute(key, '');
      } else {
        el.setAttribute(key, String(value));
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) {
      append(el, child);
    } else if (child instanceof Node) {
      el.appendChild(child);
    } else {
      el.appendChild(document.createTextNode(String(child)));
    }
  }
}

// replace empties el and appends children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// $ finds one element.
export const $ = (sel, root = document) => root.querySelector(sel);

// fmtTime shows an ISO time or unix nanoseconds in the user's locale.
export function fmtTime(value) {
  if (value === null || value === undefined || value === '' || value === 0) return '—';
  const d = typeof value === 'number' ? new Date(value / 1e6) : new Date(value.endsWith('Z') || /[+-]\d\d:?\d\d$/.test(value) ? value : value + 'Z');
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toLocaleString();
}

// timeEl is a <time> element for an ISO time or unix nanoseconds.
export function timeEl(value) {
  const t = h('time', {}, fmtTime(value));
  if (typeof value === 'number' && value > 0) t.dateTime = new Date(value / 1e6).toISOString();
  else if (typeof value === 'string' && value) t.dateTime = value;
  return t;
}

// fmtAmount shows an amount of a resource class in its unit.
export function fmtAmount(cls, n) {
  if (cls === 'MEMORY_MB') return n >= 1024 ? `${round(n / 1024)} GiB` : `${n} MiB`;
  if (cls === 'DISK_GB') return n >= 1024 ? `${round(n / 1024)} TiB` : `${n} GiB`;
  return String(n);
}

function round(x) {
  return Math.round(x * 10) / 10;
}

// className of a resource class for people.
export function className(cls) {
  return { VCPU: 'vCPUs', MEMORY_MB: 'Memory', DISK_GB: 'Disk' }[cls] || cls;
}

// meter is a labelled bar: used of capacity, with detail as its text. A
// capacity bar turns amber then red as it fills; a progress bar
// (progress true) stays one colour.
export function meter(label, used, capacity, detail, progress = false) {
  const pct = capacity > 0 ? Math.min(100, Math.round((used / capacity) * 100)) : 0;
  const tone = progress ? ' meter-progress' : pct >= 90 ? ' meter-high' : pct >= 70 ? ' meter-mid' : '';
  const fill = h('span', { class: 'meter-fill' + tone });
  fill.style.width = pct + '%';
  const id = 'm' + Math.random().toString(36).slice(2);
  return h('div', { class: 'meter-row' },
    h('div', { class: 'meter-label', id }, h('span', {}, label), h('span', { class: 'meter-value' }, detail)),
    h('div', {
      class: 'meter', role: 'meter', 'aria-labelledby': id, 'aria-valuemin': 0,
      'aria-valuemax': capacity, 'aria-valuenow': used, 'aria-valuetext': `${pct}% used`,
    }, fill));
}

// shortID shows the first block of a UUID.
export function shortID(id) {
  return id ? String(id).split('-')[0] : '';
}
