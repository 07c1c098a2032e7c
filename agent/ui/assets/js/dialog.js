// Confirmation dialogs: a modal <dialog> (focus stays inside, Escape
// cancels) that may ask for a few values before an action runs.

import { h } from './dom.js';

let seq = 0;

// confirmDialog asks before an action. fields: [{name, label, type:
// 'text'|'select'|'checkbox', options: [{value, label}], value, required,
// help}]. Resolves to the fields' values ({} without fields) when
// confirmed, null when cancelled. Focus returns where it was.
export function confirmDialog({ title, message, fields = [], confirmLabel = 'Confirm', danger = false }) {
  const before = document.activeElement;
  const id = `dlg${++seq}`;
  const inputs = {};
  const form = h('form', { method: 'dialog', class: 'dialog-form' },
    h('h2', { id: `${id}-title` }, title),
    message ? h('p', { id: `${id}-desc` }, message) : null,
    fields.map((f) => {
      const fid = `${id}-${f.name}`;
      let input;
      if (f.type === 'select') {
        input = h('select', { id: fid, name: f.name, required: f.required },
          (f.options || []).map((o) => h('option', { value: o.value, selected: o.value === f.value }, o.label)));
      } else if (f.type === 'checkbox') {
        input = h('input', { id: fid, name: f.name, type: 'checkbox', checked: !!f.value });
        inputs[f.name] = input;
        return h('div', { class: 'field field-check' }, input, h('label', { for: fid }, f.label));
      } else {
        input = h('input', { id: fid, name: f.name, type: 'text', value: f.value || '', required: f.required, autocomplete: 'off' });
      }
      inputs[f.name] = input;
      return h('div', { class: 'field' }, h('label', { for: fid }, f.label), input,
        f.help ? h('p', { class: 'help' }, f.help) : null);
    }),
    h('div', { class: 'dialog-buttons' },
      h('button', { type: 'submit', value: 'cancel', class: 'btn', formnovalidate: true }, 'Cancel'),
      h('button', { type: 'submit', value: 'ok', class: danger ? 'btn btn-danger' : 'btn btn-primary', 'data-confirm': '' }, confirmLabel)));
  const dlg = h('dialog', { class: 'dialog', 'aria-labelledby': `${id}-title`, 'aria-describedby': message ? `${id}-desc` : null }, form);
  document.body.appendChild(dlg);
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      const ok = dlg.returnValue === 'ok';
      const values = {};
      for (const [name, input] of Object.entries(inputs)) {
        values[name] = input.type === 'checkbox' ? input.checked : input.value.trim();
      }
      dlg.remove();
      const target = before && document.contains(before) ? before : twin(before);
      if (target && typeof target.focus === 'function') target.focus();
      resolve(ok ? values : null);
    });
    dlg.showModal();
    const first = fields.length ? inputs[fields[0].name] : form.querySelector('[data-confirm]');
    if (first) first.focus();
  });
}

// twin finds the element that replaced el when the page redrew while the
// dialog was open: the same id, or the same data-op, data-focus or
// data-bulk.
function twin(el) {
  if (!el || !el.getAttribute) return null;
  if (el.id) return document.getElementById(el.id);
  for (const attr of ['data-op', 'data-focus', 'data-bulk']) {
    const v = el.getAttribute(attr);
    if (v !== null) return document.querySelector(`[${attr}="${CSS.escape(v)}"]`);
  }
  return null;
}
