package command

import (
	"encoding/json"
	"strings"
	"text/template"
)

// templateFuncs are the functions -t templates may call beside
// text/template's own.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.MarshalIndent(v, "", "    ")
		return string(b), err
	},
	"join":  strings.Join,
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
	"short": func(id string) string { return shortID(id, false) },
	"time":  formatTime,
}

// renderTemplate prints v through the -t template. The template sees
// the same data -json prints, with the same field names:
//
//	cloudctl instance list -t '{{range .}}{{.Name}} {{.Status}}{{"\n"}}{{end}}'
func (e *env) renderTemplate(v any) int {
	t, err := template.New("-t").Funcs(templateFuncs).Parse(e.tmpl)
	if err != nil {
		return e.usage("-t: %v", err)
	}
	if err := t.Execute(e.ui.Stdout, v); err != nil {
		return e.fail("Error formatting with -t: %v", err)
	}
	return 0
}
