package libvirt

import "sync"

// reverter undoes the steps of an operation that failed half-way, last
// step first.
type reverter struct {
	steps []revertStep
}

type revertStep struct {
	what string
	fn   func() error
}

func (r *reverter) add(what string, fn func() error) {
	r.steps = append(r.steps, revertStep{what, fn})
}

// revert runs the steps in reverse; a step that fails is logged and the
// others still run.
func (r *reverter) revert(logger interface {
	Warn(string, ...any)
}, id string) {
	for i := len(r.steps) - 1; i >= 0; i-- {
		if err := r.steps[i].fn(); err != nil {
			logger.Warn("cannot undo a step of a failed operation", "instance_id", id, "step", r.steps[i].what, "error", err)
		}
	}
	r.steps = nil
}

// keyedLocks are mutexes by name, made on demand and dropped when free.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
}

type keyedLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks key and returns its unlock.
func (k *keyedLocks) lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = make(map[string]*keyedLock)
	}
	l := k.m[key]
	if l == nil {
		l = &keyedLock{}
		k.m[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
