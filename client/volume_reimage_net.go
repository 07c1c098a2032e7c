package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/stratus-cloud/stratus/virt"
)

// A boot volume reached over the network (a storage host's NBD export of
// the attachment, an RBD image) is reimaged by the instance's agent
// itself, while the guest is destroyed: qemu-img writes the image's
// data into the volume through the export (with the agent's client
// certificate, which the storage host admits) or through Ceph (with the
// host's cephx keyring), and the rest of the volume is zeroed, so the
// guest finds the image and nothing of the old data. Unlike a file's
// reimage, this writes in place: a reimage cut short leaves the volume
// part old, part new, and the rebuild fails (the next rebuild rewrites
// it whole).

// NBDClientTLS names the agent's client certificate files (PEM).
type NBDClientTLS struct {
	CAFile, CertFile, KeyFile string
}

// zeroChunk bounds one qemu-io write -z request.
const zeroChunk = 1 << 30

// reimageNetwork rewrites the network volume vol from the image file
// imagePath.
func (r *runner) reimageNetwork(ctx context.Context, vol *virt.Volume, imagePath string) error {
	if imagePath == "" {
		return fmt.Errorf("reimage volume %s: the image has no file on this host", vol.ID)
	}
	target, objects, cleanup, err := r.networkTarget(vol)
	if err != nil {
		return fmt.Errorf("reimage volume %s: %w", vol.ID, err)
	}
	defer cleanup()
	img, err := qemuInfo(ctx, nil, "", imagePath)
	if err != nil {
		return fmt.Errorf("reimage volume %s: the image: %w", vol.ID, err)
	}
	cur, err := qemuInfo(ctx, objects, "raw", target)
	if err != nil {
		return fmt.Errorf("reimage volume %s: the volume: %w", vol.ID, err)
	}
	if img.VirtualSize > cur.VirtualSize {
		return fmt.Errorf("reimage volume %s: the image (%d bytes) is larger than the volume (%d bytes)", vol.ID, img.VirtualSize, cur.VirtualSize)
	}
	args := append([]string{"convert"}, objectArgs(objects)...)
	args = append(args, "-q", "-n", "-f", img.Format)
	if len(objects) > 0 {
		args = append(args, imagePath, "--target-image-opts", target)
	} else {
		args = append(args, "-O", "raw", imagePath, target)
	}
	if err := runQemu(ctx, "qemu-img", args...); err != nil {
		return fmt.Errorf("reimage volume %s: %w", vol.ID, err)
	}
	for off := img.VirtualSize; off < cur.VirtualSize; off += zeroChunk {
		n := min(zeroChunk, cur.VirtualSize-off)
		args := append(objectArgs(objects), "-c", fmt.Sprintf("write -z %d %d", off, n))
		if len(objects) > 0 {
			args = append(args, "--image-opts", target)
		} else {
			args = append(args, "-f", "raw", target)
		}
		if err := runQemu(ctx, "qemu-io", args...); err != nil {
			return fmt.Errorf("reimage volume %s: zero the rest: %w", vol.ID, err)
		}
	}
	return nil
}

// networkTarget is how qemu-img and qemu-io open vol: image options and
// the TLS object for an NBD export (cleanup removes the certificate
// directory QEMU reads), a filename for an RBD image.
func (r *runner) networkTarget(vol *virt.Volume) (target string, objects []string, cleanup func(), err error) {
	n := vol.Network
	cleanup = func() {}
	switch {
	case n.Protocol == virt.NetworkNBD:
		t := r.c.cfg.NBDClientTLS
		if t == nil || t.CAFile == "" || t.CertFile == "" || t.KeyFile == "" {
			return "", nil, cleanup, errors.New("this agent has no client certificate (tls ca_file, cert_file, key_file) to open the storage host's NBD export with")
		}
		if len(n.Hosts) != 1 {
			return "", nil, cleanup, fmt.Errorf("export %s: want one NBD server, have %v", n.Name, n.Hosts)
		}
		host, port, err := net.SplitHostPort(n.Hosts[0])
		if err != nil {
			return "", nil, cleanup, err
		}
		dir, err := os.MkdirTemp("", "stratus-nbd-tls-")
		if err != nil {
			return "", nil, cleanup, err
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
		for name, src := range map[string]string{"ca-cert.pem": t.CAFile, "client-cert.pem": t.CertFile, "client-key.pem": t.KeyFile} {
			abs, err := filepath.Abs(src)
			if err == nil {
				err = os.Symlink(abs, filepath.Join(dir, name))
			}
			if err != nil {
				cleanup()
				return "", nil, func() {}, err
			}
		}
		esc := func(s string) string { return strings.ReplaceAll(s, ",", ",,") }
		objects = []string{"tls-creds-x509,id=tls0,endpoint=client,dir=" + esc(dir)}
		target = fmt.Sprintf("driver=nbd,server.type=inet,server.host=%s,server.port=%s,export=%s,tls-creds=tls0", esc(host), esc(port), esc(n.Name))
		return target, objects, cleanup, nil
	case n.Protocol == virt.NetworkRBD:
		ceph := r.c.cfg.Ceph
		if ceph == nil || ceph.Keyring == "" {
			return "", nil, cleanup, errors.New("this host has no cephx keyring (client ceph { keyring }) to write the RBD image with")
		}
		esc := func(s string) string { return strings.ReplaceAll(s, ":", `\:`) }
		target = "rbd:" + n.Name + ":id=" + esc(ceph.User) + ":keyring=" + esc(ceph.Keyring)
		if len(n.Hosts) > 0 {
			target += ":mon_host=" + esc(strings.Join(n.Hosts, ";"))
		}
		return target, nil, cleanup, nil
	}
	return "", nil, cleanup, fmt.Errorf("unknown network protocol %q", n.Protocol)
}

// objectArgs are the --object arguments (qemu-img takes them after its
// subcommand).
func objectArgs(objects []string) []string {
	var out []string
	for _, o := range objects {
		out = append(out, "--object", o)
	}
	return out
}

// imageInfo is what qemu-img info says of an image.
type imageInfo struct {
	Format      string `json:"format"`
	VirtualSize int64  `json:"virtual-size"`
}

// qemuInfo reads target's format and size: as image options when
// objects are given, else as a filename of format (probed when empty).
func qemuInfo(ctx context.Context, objects []string, format, target string) (*imageInfo, error) {
	args := append([]string{"info"}, objectArgs(objects)...)
	args = append(args, "--output=json")
	switch {
	case len(objects) > 0:
		args = append(args, "--image-opts", target)
	case format != "":
		args = append(args, "-f", format, target)
	default:
		args = append(args, target)
	}
	out, err := exec.CommandContext(ctx, "qemu-img", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("qemu-img info: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("qemu-img info: %w", err)
	}
	var info imageInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("qemu-img info: %w", err)
	}
	if info.VirtualSize <= 0 {
		return nil, fmt.Errorf("qemu-img info: no size in %s", out)
	}
	return &info, nil
}

// runQemu runs a QEMU tool, its output in the error.
func runQemu(ctx context.Context, tool string, args ...string) error {
	out, err := exec.CommandContext(ctx, tool, args...).CombinedOutput()
	// qemu-io reports a failed command on its output with status 0.
	if err != nil || strings.Contains(string(out), "failed") {
		return fmt.Errorf("%s %s: %v: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
