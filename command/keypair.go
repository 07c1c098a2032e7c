package command

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	groups["keypair"] = "Manage key pairs, the SSH public keys injected into instances"
	register("keypair create", keyPairCreateCommand)
	register("keypair list", keyPairListCommand)
	register("keypair show", keyPairShowCommand)
	register("keypair delete", keyPairDeleteCommand)
}

// keyPairUserHelp explains whose key pairs the commands act on.
const keyPairUserHelp = `
Key pairs belong to a user: the one of the identity token in
CLOUDCTL_TOKEN (see "cloudctl openrc"), or the user ID given with -user.`

// userFlag adds -user and returns a function giving the handle it selects.
func userFlag(fs *flag.FlagSet) func(c *api.Client) *api.KeyPairs {
	user := fs.String("user", "", "The ID of the user whose key pairs these are (default: the token's user).")
	return func(c *api.Client) *api.KeyPairs {
		if *user == "" {
			return c.KeyPairs()
		}
		return c.KeyPairs().ForUser(*user)
	}
}

var keyPairCreateCommand = (&spec{
	synopsis: "Create or import a key pair",
	args:     "[options] NAME",
	help: `Register a key pair named NAME. With -public-key the key in that file
(OpenSSH authorized_keys format, such as ~/.ssh/id_ed25519.pub) is
imported. Without it a new Ed25519 key pair is generated here, on the
client: its public half is registered and its private half, which never
leaves this machine, is written to -private-key-file (mode 0600, never
overwritten) or, without it, to standard output.` + keyPairUserHelp,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		pubFile := fs.String("public-key", "", "Import the public key in this file instead of generating a key pair.")
		privFile := fs.String("private-key-file", "", "Write the generated private key to this file.")
		keyType := fs.String("type", "ssh", "The key pair type: ssh, or x509 for an imported certificate.")
		handle := userFlag(fs)
		return func(e *env, args []string) int {
			name := args[0]
			if *pubFile != "" && *privFile != "" {
				return e.usage("-private-key-file is for generated key pairs; it cannot go with -public-key")
			}
			var pub, priv string
			if *pubFile != "" {
				b, err := os.ReadFile(*pubFile)
				if err != nil {
					return e.fail("Error reading the public key: %v", err)
				}
				pub = strings.TrimSpace(string(b))
			} else {
				if *keyType != "ssh" {
					return e.usage("only ssh key pairs can be generated; import an x509 certificate with -public-key")
				}
				var err error
				if pub, priv, err = generateSSHKey(name); err != nil {
					return e.fail("Error generating a key pair: %v", err)
				}
			}
			kp, _, err := handle(e.client).Create(name, *keyType, pub)
			if err != nil {
				return e.fail("Error creating key pair %q: %v", name, err)
			}
			if priv != "" && *privFile != "" {
				if err := writeNewFile(*privFile, []byte(priv)); err != nil {
					return e.fail("Key pair %q created, but its private key could not be saved: %v", name, err)
				}
			}
			return e.render(kp, func(w io.Writer) {
				if priv != "" && *privFile == "" {
					fmt.Fprint(w, priv)
					return
				}
				fmt.Fprintf(w, "Key pair %q created, fingerprint %s\n", kp.Name, kp.Fingerprint)
				if *privFile != "" {
					fmt.Fprintf(w, "Private key written to %s\n", *privFile)
				}
			})
		}
	},
}).factory()

// generateSSHKey makes an Ed25519 key pair: the authorized_keys line and
// the OpenSSH PEM private key.
func generateSSHKey(comment string) (pub, priv string, err error) {
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	sshPub, err := ssh.NewPublicKey(pk)
	if err != nil {
		return "", "", err
	}
	block, err := ssh.MarshalPrivateKey(sk, comment)
	if err != nil {
		return "", "", err
	}
	pub = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))) + " " + comment
	return pub, string(pem.EncodeToMemory(block)), nil
}

// writeNewFile writes a secret to a file that must not exist yet.
func writeNewFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

var keyPairListCommand = (&spec{
	synopsis: "List key pairs",
	args:     "[options]",
	help:     `List a user's key pairs.` + keyPairUserHelp,
	nargs:    exactly(0),
	list:     true,
	setup: func(fs *flag.FlagSet) runFunc {
		handle := userFlag(fs)
		return func(e *env, _ []string) int {
			kps, _, err := handle(e.client).List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing key pairs: %v", err)
			}
			return e.render(kps, func(w io.Writer) {
				rows := make([][]string, 0, len(kps))
				for _, kp := range kps {
					rows = append(rows, []string{kp.Name, kp.Type, kp.Fingerprint, formatTime(kp.CreatedAt)})
				}
				printTable(w, []string{"Name", "Type", "Fingerprint", "Created"}, rows)
			})
		}
	},
}).factory()

var keyPairShowCommand = (&spec{
	synopsis: "Show a key pair",
	args:     "[options] NAME",
	help:     `Show a key pair, with its public key.` + keyPairUserHelp,
	nargs:    exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		handle := userFlag(fs)
		return func(e *env, args []string) int {
			kp, _, err := handle(e.client).Info(args[0], e.queryOptions())
			if err != nil {
				return e.fail("Error reading key pair %q: %v", args[0], err)
			}
			return e.render(kp, func(w io.Writer) {
				printKV(w, []kv{
					{"Name", kp.Name}, {"Type", kp.Type}, {"User ID", kp.UserID},
					{"Fingerprint", kp.Fingerprint}, {"Created", formatTime(kp.CreatedAt)},
				})
				fmt.Fprintf(w, "\n%s\n", kp.PublicKey)
			})
		}
	},
}).factory()

var keyPairDeleteCommand = (&spec{
	synopsis: "Delete a key pair",
	args:     "[options] NAME",
	help:     `Delete a key pair. Instances booted with it keep the key they got.` + keyPairUserHelp,
	nargs:    exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		handle := userFlag(fs)
		return func(e *env, args []string) int {
			if _, err := handle(e.client).Delete(args[0]); err != nil {
				return e.fail("Error deleting key pair %q: %v", args[0], err)
			}
			return e.render(map[string]string{"Deleted": args[0]}, func(w io.Writer) {
				fmt.Fprintf(w, "Key pair %q deleted\n", args[0])
			})
		}
	},
}).factory()
