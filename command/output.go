package command

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// render prints v as JSON when -json is set, else calls human. It returns
// the exit code.
func (e *env) render(v any, human func(w io.Writer)) int {
	if e.tmpl != "" {
		return e.renderTemplate(v)
	}
	if !e.json {
		human(e.ui.Stdout)
		return 0
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return e.fail("Error encoding JSON: %v", err)
	}
	fmt.Fprintf(e.ui.Stdout, "%s\n", b)
	return 0
}

// printTable prints rows under header as aligned columns.
func printTable(w io.Writer, header []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	writeRow := func(cells []string) {
		for i, c := range cells {
			cells[i] = cleanCell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	writeRow(append([]string(nil), header...))
	for _, r := range rows {
		writeRow(r)
	}
	_ = tw.Flush()
}

// kv is one line of key/value output.
type kv struct{ key, value string }

// printKV prints key = value lines with the "=" aligned.
func printKV(w io.Writer, pairs []kv) {
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t= %s\n", cleanCell(p.key), cleanCell(p.value))
	}
	_ = tw.Flush()
}

// mapKV returns m's pairs sorted by key.
func mapKV(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// cleanCell keeps a cell on one line and out of tabwriter's column logic.
func cleanCell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

func itoa(i int) string { return strconv.Itoa(i) }

func btoa(b bool) string { return strconv.FormatBool(b) }

// ftoa formats a float with at least one decimal, as Nova shows 1.0.
func ftoa(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}
