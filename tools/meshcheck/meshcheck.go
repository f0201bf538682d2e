// Package meshcheck is the judge of the Mesh (Rosetta) front's answers:
// the Mesh specification's OpenAPI document (testdata/api.json, unchanged,
// see testdata/ORIGIN) loaded with every object schema that lists its
// properties closed, so that an answer carrying a field the standard does
// not define fails. Free-form objects (the metadata ones, which list no
// properties) stay open, as the standard means them to be.
package meshcheck

import (
	_ "embed"
	"fmt"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

//go:embed testdata/api.json
var spec []byte

// Spec is the unchanged Mesh specification document.
func Spec() []byte { return spec }

// Checker validates answers of Mesh endpoints.
type Checker struct {
	c *openapicheck.Checker
}

// New loads the specification and closes its schemas.
func New() (*Checker, error) {
	c, err := openapicheck.New(spec)
	if err != nil {
		return nil, err
	}
	closed := false
	seen := map[*openapi3.Schema]bool{}
	var walk func(s *openapi3.Schema)
	walk = func(s *openapi3.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if len(s.Properties) > 0 {
			s.AdditionalProperties = openapi3.AdditionalProperties{Has: &closed}
		}
		for _, p := range s.Properties {
			walk(p.Value)
		}
		if s.Items != nil {
			walk(s.Items.Value)
		}
		if ap := s.AdditionalProperties.Schema; ap != nil {
			walk(ap.Value)
		}
	}
	for _, s := range c.Doc.Components.Schemas {
		walk(s.Value)
	}
	if open := c.OpenObjects(); len(open) > 0 {
		return nil, fmt.Errorf("schemas left open: %v", open)
	}
	return &Checker{c: c}, nil
}

// Endpoints lists the specification's paths (every one is a POST).
func (k *Checker) Endpoints() []string {
	var out []string
	for _, op := range k.c.Operations() {
		out = append(out, op.Path)
	}
	return out
}

// Check validates the answer of a POST to path with its status: a 200
// against the endpoint's response, anything else must be the 500 with an
// Error object the standard prescribes for every failure.
func (k *Checker) Check(path string, status int, body []byte) error {
	if status != http.StatusOK && status != http.StatusInternalServerError {
		return fmt.Errorf("%s: status %d, Mesh answers 200 or 500 only", path, status)
	}
	return k.c.CheckAnswer(openapicheck.Op{Method: http.MethodPost, Path: path}, status, body)
}
