// Live updates through the native API's blocking queries: a watch asks
// for a path with ?index=N&wait=…, which answers as soon as the data
// changes past N (or when the wait ends), and calls back on each change.

import { v1 } from './api.js';

const listeners = new Set();
// healthy is null until the first watch answers or fails.
let healthy = null;

// onLiveState registers fn(healthy, error) for the live indicator.
export function onLiveState(fn) {
  listeners.add(fn);
}

function setHealthy(ok, err) {
  if (ok === healthy) return;
  healthy = ok;
  for (const fn of listeners) fn(ok, err);
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

// watch follows a /v1 read until signal aborts. onChange(data, index) runs
// on the first answer and on every answer whose index differs from the
// last; calls never overlap. Errors back off and retry, unless
// onError(err) answers true, which ends the watch.
export function watch(path, onChange, { signal, wait = '60s', onError } = {}) {
  let index = 0;
  let backoff = 500;
  const sep = path.includes('?') ? '&' : '?';
  (async () => {
    while (!signal.aborted) {
      try {
        const res = await v1('GET', `${path}${sep}index=${index}&wait=${wait}`, { signal });
        if (signal.aborted) return;
        setHealthy(true);
        backoff = 500;
        if (res.index !== index || index === 0) {
          index = res.index || 1;
          try {
            await onChange(res.data, index);
          } catch (err) {
            // Read again at once after the backoff: index 0 answers
            // without blocking.
            index = 0;
            throw err;
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        if (onError && onError(err)) return;
        setHealthy(false, err);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 10000);
      }
    }
  })();
}

// watchInstances calls onChange() now and whenever any instance changes.
// It learns of changes from GET /v1/watch/instances, which answers only
// an index; the page then reads what the user may see through the
// Compute API.
export function watchInstances(onChange, opts) {
  watch('/watch/instances', () => onChange(), opts);
}
