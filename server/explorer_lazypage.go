package server

import (
	"errors"
	"html/template"
	"io"
	"sync"

	"github.com/openexplorer/blockbook/static"
)

// lazyPage is one explorer page's template set, parsed on the page's first
// render. Every page is a clone of the shared templates with its own file
// parsed in, about 0.35 MB of live heap each: the 12 pages held 4.3 MB from
// the start, which the garbage collector's headroom doubles in RSS, also in
// a process that only syncs and never serves a page (docs/performance.md,
// "Memory and datadir of the Ethereum sync").
type lazyPage struct {
	base *template.Template // the shared templates, never executed
	file string             // the page's own template file
	once sync.Once
	t    *template.Template
	err  error
}

// parse clones the shared templates and parses the page's file into the
// clone (html/template's Clone locks the set it copies, so first renders
// of several pages at once are safe).
func (p *lazyPage) parse() (*template.Template, error) {
	t, err := p.base.Clone()
	if err != nil {
		return nil, err
	}
	return t.ParseFS(static.Templates, p.file)
}

// ExecuteTemplate parses the page if it was not yet, then renders name.
func (p *lazyPage) ExecuteTemplate(w io.Writer, name string, data any) error {
	if p == nil {
		return errors.New("explorer: no such page template")
	}
	p.once.Do(func() { p.t, p.err = p.parse() })
	if p.err != nil {
		return p.err
	}
	return p.t.ExecuteTemplate(w, name, data)
}
