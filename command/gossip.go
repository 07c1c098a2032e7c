package command

import (
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/stratus-cloud/stratus/api"
)

// gossipKeySize is the size of generated gossip keys: AES-256.
const gossipKeySize = 32

var gossipKeygenCommand = (&spec{
	synopsis: "Generate a gossip encryption key",
	args:     "",
	help: `Print a new random 32-byte gossip encryption key, base64-encoded, for
the agents' encrypt setting or for "cloudctl operator gossip keyring
-install".`,
	nargs: exactly(0),
	local: true,
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			key := make([]byte, gossipKeySize)
			if _, err := rand.Read(key); err != nil {
				return e.fail("Error generating a key: %v", err)
			}
			fmt.Fprintln(e.ui.Stdout, base64.StdEncoding.EncodeToString(key))
			return 0
		}
	},
}).factory()

var gossipKeyringCommand = (&spec{
	synopsis: "List, install, use and remove gossip encryption keys",
	args:     "[options] (-list | -install KEY | -use KEY | -remove KEY)",
	help: `Manage the gossip encryption keyring of every member of the pool,
servers and client agents alike. The agent asks a server, which applies
the operation to its own keyring and to every alive member's through
encrypted gossip messages, and reports how many answered. Each member
keeps its keyring in its data dir, so installed keys survive restarts.

Rotate the key without downtime in three steps, each reaching every
member before the next:

  cloudctl operator gossip keyring -install NEW
  cloudctl operator gossip keyring -use NEW
  cloudctl operator gossip keyring -remove OLD

Members that missed a step are listed with their error; repeat the step
once they are back.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		list := fs.Bool("list", false, "List the keys installed across the pool.")
		install := fs.String("install", "", "Install a base64 `KEY` on every member (for decryption).")
		use := fs.String("use", "", "Make every member encrypt with an installed `KEY`.")
		remove := fs.String("remove", "", "Remove a `KEY` that is no longer in use from every member.")
		return func(e *env, _ []string) int {
			n := 0
			for _, set := range []bool{*list, *install != "", *use != "", *remove != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				return e.usage("exactly one of -list, -install, -use and -remove is required")
			}
			op, what, resp, err := e.client.Operator(), "", (*api.KeyringResponse)(nil), error(nil)
			switch {
			case *list:
				what = "list"
				resp, err = op.KeyringList()
			case *install != "":
				what = "install"
				resp, err = op.KeyringInstall(*install)
			case *use != "":
				what = "use"
				resp, err = op.KeyringUse(*use)
			default:
				what = "remove"
				resp, err = op.KeyringRemove(*remove)
			}
			if err != nil {
				return e.fail("Error with keyring %s: %v", what, err)
			}
			code := e.render(resp, func(w io.Writer) { printKeyring(w, what, resp) })
			if code == 0 && len(resp.Errors) > 0 {
				return 1
			}
			return code
		}
	},
}).factory()

func printKeyring(w io.Writer, what string, resp *api.KeyringResponse) {
	if what == "list" {
		fmt.Fprintf(w, "Gossip keys (%d of %d members answered):\n", resp.Responses, resp.Members)
		keys := make([]string, 0, len(resp.Keys))
		for k := range resp.Keys {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if resp.PrimaryKeys[keys[i]] != resp.PrimaryKeys[keys[j]] {
				return resp.PrimaryKeys[keys[i]] > resp.PrimaryKeys[keys[j]]
			}
			return keys[i] < keys[j]
		})
		rows := make([][]string, 0, len(keys))
		for _, k := range keys {
			rows = append(rows, []string{k, fmt.Sprintf("%d/%d", resp.Keys[k], resp.Members),
				fmt.Sprintf("%d/%d", resp.PrimaryKeys[k], resp.Members)})
		}
		printTable(w, []string{"Key", "Installed", "In Use"}, rows)
	} else {
		fmt.Fprintf(w, "Keyring %s: %d of %d members done\n", what, resp.Responses-len(resp.Errors), resp.Members)
	}
	names := make([]string, 0, len(resp.Errors))
	for n := range resp.Errors {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "Error on %s: %s\n", n, resp.Errors[n])
	}
}
