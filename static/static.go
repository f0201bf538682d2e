// Package static holds the web assets served by the public server: the
// HTML explorer's templates, stylesheet, script and icon, embedded in the
// binary so that it is self-contained and works offline.
package static

import (
	"embed"
	"io/fs"
)

//go:embed templates/*.html assets/*
var files embed.FS

// Templates holds the explorer's html/template files: layout.html,
// partials.html, charts.html and runes.html are shared, every other file
// is one page.
var Templates = sub("templates")

// Assets holds the files served under /static/.
var Assets = sub("assets")

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return f
}
