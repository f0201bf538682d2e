package server

import (
	"errors"
	"html/template"
	"io"
	"sync"
)

// lazyPage is one explorer page's template set, parsed on the page's first
// render. Every page is a clone of the shared templates with its own file
// parsed in, about 0.35 MB of live heap each: the 12 pages held 4.3 MB from
// the start, which the garbage collector's headroom doubles in RSS, also in
// a process that only syncs and never serves a page (docs/performance.md,
// "Memory and datadir of the Ethereum sync").
type lazyPage struct {
	once  sync.Once
	parse func() (*template.Template, error)
	t     *template.Template
	err   error
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

// clonePage returns a parser of a page over a clone of base. The clones
// are taken one at a time (cloneMu), as pages may first render at once.
func clonePage(base *template.Template, parseFile func(*template.Template) (*template.Template, error), cloneMu *sync.Mutex) func() (*template.Template, error) {
	return func() (*template.Template, error) {
		cloneMu.Lock()
		t, err := base.Clone()
		cloneMu.Unlock()
		if err != nil {
			return nil, err
		}
		return parseFile(t)
	}
}
