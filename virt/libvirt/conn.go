package libvirt

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// ErrUnavailable means the driver is not connected to libvirtd: it is
// down or restarting, and the driver keeps dialling it.
var ErrUnavailable = errors.New("libvirt: not connected to libvirtd")

// ErrClosed means the driver was closed.
var ErrClosed = errors.New("libvirt: driver closed")

// Backoff of the dialler between failed connection attempts.
const (
	dialBackoffMin = 50 * time.Millisecond
	dialBackoffMax = 2 * time.Second
)

// connection keeps one connection to libvirtd open: it dials with
// backoff, subscribes to lifecycle events once per connection, and
// dials again when libvirtd goes away. Operations borrow the current
// connection through get.
type connection struct {
	uri     *url.URL
	logger  hclog.Logger
	onEvent func(golibvirt.DomainEventLifecycleMsg)
	// onConnect runs on every new connection before it is handed out.
	onConnect func(*golibvirt.Libvirt)

	mu      sync.Mutex
	lv      *golibvirt.Libvirt // nil while disconnected
	changed chan struct{}      // closed and replaced when lv changes
	lastErr error              // why the last attempt failed or the connection ended
	closed  bool
	// waiting counts the operations blocked in get for a connection,
	// so a test can tell when one waits instead of sleeping.
	waiting int

	done chan struct{} // closed by close
	wg   sync.WaitGroup
}

func newConnection(uri *url.URL, logger hclog.Logger, onEvent func(golibvirt.DomainEventLifecycleMsg),
	onConnect func(*golibvirt.Libvirt)) *connection {
	c := &connection{
		uri: uri, logger: logger, onEvent: onEvent, onConnect: onConnect,
		changed: make(chan struct{}),
		lastErr: errors.New("not connected yet"),
		done:    make(chan struct{}),
	}
	c.wg.Add(1)
	go c.run()
	return c
}

// set publishes the current connection (nil while there is none).
func (c *connection) set(lv *golibvirt.Libvirt, why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lv = lv
	if why != nil {
		c.lastErr = why
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// run is the dialler: connect, serve, and connect again when libvirtd
// goes away, until close.
func (c *connection) run() {
	defer c.wg.Done()
	wait := time.Duration(0)
	failures := 0
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-c.done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		lv, events, cancel, err := c.dial()
		if err != nil {
			failures++
			c.set(nil, err)
			if failures == 1 {
				c.logger.Warn("cannot connect to libvirtd; retrying", "uri", c.uri.String(), "error", err)
			}
			wait = min(max(2*wait, dialBackoffMin), dialBackoffMax)
			continue
		}
		if failures > 0 {
			c.logger.Info("connected to libvirtd again", "uri", c.uri.String(), "failed_attempts", failures)
		}
		failures, wait = 0, 0
		if c.onConnect != nil {
			c.onConnect(lv)
		}
		c.set(lv, nil)
		if !c.serve(lv, events) {
			hangUp(lv, events, cancel)
			c.set(nil, ErrClosed)
			return
		}
		hangUp(lv, events, cancel)
		c.set(nil, errors.New("connection to libvirtd lost"))
		c.logger.Warn("lost the connection to libvirtd; reconnecting", "uri", c.uri.String())
		wait = dialBackoffMin
	}
}

// dial connects and subscribes to lifecycle events.
func (c *connection) dial() (*golibvirt.Libvirt, <-chan golibvirt.DomainEventLifecycleMsg, context.CancelFunc, error) {
	lv, err := golibvirt.ConnectToURI(c.uri)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	events, err := lv.LifecycleEvents(ctx)
	if err != nil {
		cancel()
		_ = lv.Disconnect()
		return nil, nil, nil, fmt.Errorf("subscribe to lifecycle events: %w", err)
	}
	return lv, events, cancel, nil
}

// serve hands the connection's events on until libvirtd goes away
// (true) or the driver is closed (false).
func (c *connection) serve(lv *golibvirt.Libvirt, events <-chan golibvirt.DomainEventLifecycleMsg) bool {
	for {
		select {
		case <-c.done:
			return false
		case <-lv.Disconnected():
			return true
		case ev, ok := <-events:
			if !ok {
				// The stream ends with the connection; wait for that.
				select {
				case <-c.done:
					return false
				case <-lv.Disconnected():
					return true
				}
			}
			c.onEvent(ev)
		}
	}
}

// hangUp closes a connection and ends its event subscription — in that
// order. Cancelling the subscription first makes go-libvirt send a
// deregister call that can still be in flight when the connection
// closes, and libvirtd 9.0 then frees the client's callback list in one
// thread while its close-time cleanup walks it in another: it
// segfaults (remoteClientFreePrivateCallbacks), taking every guest's
// management with it. Once the connection is closed go-libvirt ends the
// stream itself and sends nothing more.
func hangUp(lv *golibvirt.Libvirt, events <-chan golibvirt.DomainEventLifecycleMsg, cancel context.CancelFunc) {
	drained := make(chan struct{})
	go func() { // the event forwarder must never block on a send meanwhile
		defer close(drained)
		drain(events)
	}()
	_ = lv.Disconnect() // a no-op when libvirtd went away by itself
	<-drained
	cancel()
}

// drain reads an event channel until go-libvirt closes it, so its
// forwarding goroutine is never left blocked on a send.
func drain(events <-chan golibvirt.DomainEventLifecycleMsg) {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// get returns the current connection, waiting up to wait (and ctx) for
// one while libvirtd is unreachable.
func (c *connection) get(ctx context.Context, wait time.Duration) (*golibvirt.Libvirt, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		c.mu.Lock()
		lv, changed, lastErr, closed := c.lv, c.changed, c.lastErr, c.closed
		c.mu.Unlock()
		switch {
		case closed:
			return nil, ErrClosed
		case lv != nil && lv.IsConnected():
			return lv, nil
		}
		if err := c.await(ctx, changed, timer.C); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w at %s (%v): %w", ErrUnavailable, c.uri, lastErr, ctx.Err())
			}
			return nil, fmt.Errorf("%w at %s for %v, still retrying: %v", ErrUnavailable, c.uri, wait, lastErr)
		}
	}
}

// errWaitOver means get's wait for a connection ran out.
var errWaitOver = errors.New("wait for a connection ran out")

// await blocks until the connection changes (nil), ctx ends or the wait
// runs out, counted in waiting meanwhile.
func (c *connection) await(ctx context.Context, changed <-chan struct{}, expired <-chan time.Time) error {
	c.mu.Lock()
	c.waiting++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.waiting--
		c.mu.Unlock()
	}()
	select {
	case <-changed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-expired:
		return errWaitOver
	}
}

// waiters is how many operations wait in get for a connection.
func (c *connection) waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting
}

// close stops the dialler and disconnects.
func (c *connection) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	close(c.done)
	c.wg.Wait()
	c.set(nil, ErrClosed) // wakes the operations waiting in get
}

// connLost reports whether err came from losing the connection lv rather
// than from libvirt refusing the call.
func connLost(lv *golibvirt.Libvirt, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, golibvirt.ErrInterrupted) {
		return true
	}
	var lerr golibvirt.Error
	if errors.As(err, &lerr) {
		return false
	}
	return !lv.IsConnected()
}
