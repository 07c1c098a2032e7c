package libvirt

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"
)

// DefineCephSecret makes libvirt hold the cephx key of user under the
// secret uuid (Nova's rbd_secret_uuid), so that RBD volumes attached
// with virt.NetworkDisk{User: user, SecretUUID: uuid} authenticate
// without the key ever being in a domain's XML. key is the key as Ceph
// prints it (base64, `ceph auth get-key`). The secret is private (its
// value cannot be read back through libvirt) and persistent; defining
// it again replaces the key, so a rotated key is picked up by the next
// call.
func (d *Driver) DefineCephSecret(ctx context.Context, uuid, user, key string) error {
	u, err := parseUUID(uuid)
	if err != nil {
		return fmt.Errorf("libvirt ceph secret %q: %w", uuid, err)
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) == 0 {
		return fmt.Errorf("libvirt ceph secret %s: the cephx key of client.%s is not base64", uuid, user)
	}
	doc, err := (&libvirtxml.Secret{
		Ephemeral:   "no",
		Private:     "yes",
		UUID:        uuid,
		Description: "stratus: cephx key of client." + user,
		// Usage names are unique per type: the uuid keeps two users'
		// (or two clusters') secrets apart.
		Usage: &libvirtxml.SecretUsage{Type: "ceph", Name: "stratus client." + user + " " + uuid},
	}).Marshal()
	if err != nil {
		return fmt.Errorf("libvirt ceph secret %s: %w", uuid, err)
	}
	return d.withConn(ctx, func(_ context.Context, lv *golibvirt.Libvirt) error {
		sec, err := lv.SecretDefineXML(doc, 0)
		if err != nil {
			return fmt.Errorf("libvirt ceph secret %s: define: %w", uuid, err)
		}
		if sec.UUID != u {
			return fmt.Errorf("libvirt ceph secret %s: libvirt defined another uuid", uuid)
		}
		if err := lv.SecretSetValue(sec, raw, 0); err != nil {
			return fmt.Errorf("libvirt ceph secret %s: set its value: %w", uuid, err)
		}
		return nil
	})
}

// UndefineSecret removes the libvirt secret uuid; one that is not
// there is already gone.
func (d *Driver) UndefineSecret(ctx context.Context, uuid string) error {
	u, err := parseUUID(uuid)
	if err != nil {
		return fmt.Errorf("libvirt secret %q: %w", uuid, err)
	}
	return d.withConn(ctx, func(_ context.Context, lv *golibvirt.Libvirt) error {
		sec, err := lv.SecretLookupByUUID(u)
		if noSecret(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("libvirt secret %s: %w", uuid, err)
		}
		if err := lv.SecretUndefine(sec); err != nil && !noSecret(err) {
			return fmt.Errorf("libvirt secret %s: undefine: %w", uuid, err)
		}
		return nil
	})
}

// parseUUID reads a UUID in its usual 8-4-4-4-12 hex form.
func parseUUID(s string) (golibvirt.UUID, error) {
	u, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return golibvirt.UUID{}, fmt.Errorf("not a UUID: %q", s)
	}
	return golibvirt.UUID(u), nil
}

// noSecret reports libvirt's "no secret with matching uuid"
// (go-libvirt's IsNotFound knows only domains).
func noSecret(err error) bool {
	var e golibvirt.Error
	return errors.As(err, &e) && e.Code == uint32(golibvirt.ErrNoSecret)
}
