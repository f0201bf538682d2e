// Package static holds the web assets served by the public server, embedded
// in the binary so that it is self-contained and works offline.
package static

import (
	"embed"
	"html/template"
)

//go:embed index.html
var files embed.FS

// Index is the landing page at "/" (until the HTML explorer arrives).
var Index = template.Must(template.ParseFS(files, "index.html"))
