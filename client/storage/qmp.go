package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// qmpTimeout bounds one QMP command: the daemon answers at once, so a
// silence means it is gone or stuck.
const qmpTimeout = 30 * time.Second

// qmp is a connection to a QEMU monitor (here qemu-storage-daemon's).
// It is not safe for concurrent use: the exporter serialises its calls.
type qmp struct {
	conn net.Conn
	dec  *json.Decoder
}

// qmpError is an error the monitor answered (the command ran and
// failed), as opposed to a broken connection.
type qmpError struct {
	Class string `json:"class"`
	Desc  string `json:"desc"`
}

func (e *qmpError) Error() string { return e.Class + ": " + e.Desc }

// dialQMP connects to the monitor socket at path and leaves its
// negotiation mode, ready for commands.
func dialQMP(path string) (*qmp, error) {
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	q := &qmp{conn: conn, dec: json.NewDecoder(conn)}
	// A monitor serves one connection at a time: one that another
	// process holds greets no one.
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var greeting struct {
		QMP json.RawMessage `json:"QMP"`
	}
	if err := q.dec.Decode(&greeting); err != nil || greeting.QMP == nil {
		conn.Close()
		return nil, fmt.Errorf("QMP greeting on %s: %v", path, err)
	}
	if err := q.run("qmp_capabilities", nil, nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("QMP negotiation on %s: %w", path, err)
	}
	return q, nil
}

// run executes one command with args and decodes its return value into
// out (when not nil). Events that arrive meanwhile are skipped.
func (q *qmp) run(cmd string, args, out any) error {
	_ = q.conn.SetDeadline(time.Now().Add(qmpTimeout))
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := q.conn.Write(b); err != nil {
		return fmt.Errorf("QMP %s: %w", cmd, err)
	}
	for {
		var msg struct {
			Return json.RawMessage `json:"return"`
			Error  *qmpError       `json:"error"`
			Event  string          `json:"event"`
		}
		if err := q.dec.Decode(&msg); err != nil {
			return fmt.Errorf("QMP %s: %w", cmd, err)
		}
		switch {
		case msg.Event != "":
			continue
		case msg.Error != nil:
			return fmt.Errorf("QMP %s: %w", cmd, msg.Error)
		case out != nil:
			return json.Unmarshal(msg.Return, out)
		}
		return nil
	}
}

// refused reports whether err is the monitor's answer (the daemon runs)
// rather than a lost connection.
func refused(err error) bool {
	var qe *qmpError
	return errors.As(err, &qe)
}

func (q *qmp) close() { q.conn.Close() }
