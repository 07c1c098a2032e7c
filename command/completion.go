package command

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Shell completion: "cloudctl completion bash|zsh" prints a script that
// asks "cloudctl __complete WORDS…" for the candidates of the word being
// typed, so completion always matches the binary's own commands and
// flags.

// completeCommand is the hidden command the scripts call.
const completeCommand = "__complete"

const bashCompletion = `# bash completion for cloudctl. Load it with:
#   source <(cloudctl completion bash)
_cloudctl() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    local IFS=$'\n'
    local candidates
    candidates=$(cloudctl __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
    if [ -z "$candidates" ]; then
        COMPREPLY=()
        return
    fi
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o default -F _cloudctl cloudctl
`

const zshCompletion = `#compdef cloudctl
# zsh completion for cloudctl. Load it with:
#   source <(cloudctl completion zsh)
# or save it as _cloudctl in a directory of $fpath.
_cloudctl() {
    local -a candidates
    candidates=("${(@f)$(cloudctl __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if (( ${#candidates} == 0 )) || [[ -z "${candidates[1]}" ]]; then
        _files
        return
    fi
    compadd -- "${candidates[@]}"
}
if (( $+functions[compdef] )); then
    compdef _cloudctl cloudctl
fi
`

var completionCommand = (&spec{
	synopsis: "Print a shell completion script (bash or zsh)",
	args:     "bash|zsh",
	help: `Print a script that completes cloudctl's commands and flags in bash or zsh;
arguments that are not commands or flags complete as file names. Load it in
your shell's startup file:

  source <(cloudctl completion bash)    # ~/.bashrc
  source <(cloudctl completion zsh)     # ~/.zshrc`,
	nargs: exactly(1),
	local: true,
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			switch args[0] {
			case "bash":
				fmt.Fprint(e.ui.Stdout, bashCompletion)
			case "zsh":
				fmt.Fprint(e.ui.Stdout, zshCompletion)
			default:
				return e.usage("unknown shell %q: use bash or zsh", args[0])
			}
			return 0
		}
	},
}).factory()

// complete prints the candidates for the last of words (the word being
// typed, maybe empty): the next command words, or the command's flags
// when it starts with "-". It prints nothing for other arguments, so the
// shell completes file names.
func complete(w io.Writer, words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	var cmdWords []string
	for _, wd := range before {
		if strings.HasPrefix(wd, "-") {
			break
		}
		cmdWords = append(cmdWords, wd)
	}
	// The command typed so far, if any: its flags.
	for n := len(cmdWords); n > 0; n-- {
		name := strings.Join(cmdWords[:n], " ")
		f, ok := commands[name]
		if !ok {
			continue
		}
		if !strings.HasPrefix(cur, "-") {
			return 0
		}
		sc, ok := f(&UI{Stdout: io.Discard, Stderr: io.Discard, Name: name}).(*specCommand)
		if !ok {
			return 0
		}
		fs, _ := sc.flagSet(&env{})
		var flags []string
		fs.VisitAll(func(fl *flag.Flag) { flags = append(flags, "-"+fl.Name) })
		sort.Strings(flags)
		for _, fl := range flags {
			fmt.Fprintln(w, fl)
		}
		return 0
	}
	if len(cmdWords) != len(before) {
		return 0 // flags before a command: nothing sensible to offer
	}
	prefix := strings.Join(cmdWords, " ")
	if prefix != "" {
		prefix += " "
	}
	next := map[string]bool{}
	for name := range commands {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
			next[strings.Fields(rest)[0]] = true
		}
	}
	if prefix == "" {
		next["help"] = true
	}
	out := make([]string, 0, len(next))
	for n := range next {
		out = append(out, n)
	}
	sort.Strings(out)
	for _, n := range out {
		fmt.Fprintln(w, n)
	}
	return 0
}
