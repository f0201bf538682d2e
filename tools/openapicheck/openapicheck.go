// Package openapicheck validates real answers of the REST API against the
// server's OpenAPI description (server/openapi/openapi.yaml), with
// kin-openapi's JSON schema validator. The unit tests of server and the
// e2e suite share it.
package openapicheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Checker holds a loaded and validated description.
type Checker struct {
	Doc *openapi3.T
}

// Op is one operation of the description.
type Op struct {
	Method string // upper case
	Path   string // the path template, e.g. /api/v2/tx/{txid}
}

func (o Op) String() string { return o.Method + " " + o.Path }

// New loads a description and checks that it is valid OpenAPI 3.
func New(spec []byte) (*Checker, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("load openapi: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("invalid openapi: %w", err)
	}
	return &Checker{Doc: doc}, nil
}

// Operations lists every operation, sorted.
func (c *Checker) Operations() []Op {
	var ops []Op
	for path, item := range c.Doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, Op{strings.ToUpper(method), path})
		}
	}
	slices.SortFunc(ops, func(a, b Op) int { return strings.Compare(a.String(), b.String()) })
	return ops
}

// Match finds the operation of a request path (escaped, without the
// query). A parameter matches one non-empty segment (an account descriptor
// holding '/' is sent escaped); the template with the most literal
// segments wins.
func (c *Checker) Match(method, escapedPath string) (Op, bool) {
	var best Op
	bestLit := -1
	got := strings.Split(escapedPath, "/")
	for _, op := range c.Operations() {
		if op.Method != method {
			continue
		}
		if lit, ok := matchTemplate(strings.Split(op.Path, "/"), got); ok && lit > bestLit {
			best, bestLit = op, lit
		}
	}
	return best, bestLit >= 0
}

func matchTemplate(tmpl, got []string) (literals int, ok bool) {
	if len(tmpl) != len(got) {
		return 0, false
	}
	for i, seg := range tmpl {
		switch {
		case strings.HasPrefix(seg, "{"):
			if got[i] == "" {
				return 0, false
			}
		case seg != got[i]:
			return 0, false
		default:
			literals++
		}
	}
	return literals, true
}

// ResponseSchema returns the JSON schema of an operation's answer with a
// status code.
func (c *Checker) ResponseSchema(op Op, status int) (*openapi3.Schema, error) {
	item := c.Doc.Paths.Find(op.Path)
	if item == nil {
		return nil, fmt.Errorf("%s: no such path in the spec", op)
	}
	o := item.GetOperation(op.Method)
	if o == nil {
		return nil, fmt.Errorf("%s: no such operation in the spec", op)
	}
	ref := o.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("%s: status %d is not described", op, status)
	}
	mt := ref.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, fmt.Errorf("%s %d: no application/json schema", op, status)
	}
	return mt.Schema.Value, nil
}

// Schema returns a named schema of the components.
func (c *Checker) Schema(name string) (*openapi3.Schema, error) {
	ref := c.Doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("no schema %q in the spec", name)
	}
	return ref.Value, nil
}

// CheckAnswer validates a JSON answer of an operation with a status code.
func (c *Checker) CheckAnswer(op Op, status int, body []byte) error {
	s, err := c.ResponseSchema(op, status)
	if err != nil {
		return err
	}
	if err := Validate(s, body); err != nil {
		return fmt.Errorf("%s %d: %w", op, status, err)
	}
	return nil
}

// Validate checks a JSON document against a schema, reporting every
// mismatch (formats such as date-time included).
func Validate(s *openapi3.Schema, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	v, err := numbersToFloat(v)
	if err != nil {
		return err
	}
	if err := s.VisitJSON(v, openapi3.MultiErrors(), openapi3.EnableFormatValidation(), openapi3.VisitAsResponse()); err != nil {
		return fmt.Errorf("answer does not match the spec: %s", describe(err))
	}
	return nil
}

// describe renders validation errors one line each: where in the answer,
// and why (the validator's own text repeats the whole schema).
func describe(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, len(me))
		for i, e := range me {
			parts[i] = describe(e)
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return "/" + strings.Join(se.JSONPointer(), "/") + ": " + se.Reason
	}
	return err.Error()
}

// numbersToFloat turns json.Numbers into the float64s the validator
// checks, refusing integers a float64 cannot hold exactly (the spec would
// then have to say string).
func numbersToFloat(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil && (i > 1<<53 || i < -(1<<53)) {
			return nil, fmt.Errorf("integer %s is too large for a JSON number", x)
		}
		return f, nil
	case map[string]any:
		for k, e := range x {
			n, err := numbersToFloat(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := numbersToFloat(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			x[i] = n
		}
	}
	return v, nil
}

// OpenObjects lists the schemas (by JSON pointer into the components)
// that describe objects but accept properties they do not list, so that
// tests can allow only the deliberate ones.
func (c *Checker) OpenObjects() []string {
	var out []string
	seen := map[*openapi3.Schema]bool{}
	var walk func(at string, s *openapi3.Schema)
	walk = func(at string, s *openapi3.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if len(s.Properties) > 0 && (s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has) {
			out = append(out, at)
		}
		for name, p := range s.Properties {
			if p.Ref == "" {
				walk(at+"/properties/"+name, p.Value)
			}
		}
		if s.Items != nil && s.Items.Ref == "" {
			walk(at+"/items", s.Items.Value)
		}
		if ap := s.AdditionalProperties.Schema; ap != nil && ap.Ref == "" {
			walk(at+"/additionalProperties", ap.Value)
		}
	}
	for name, s := range c.Doc.Components.Schemas {
		walk("#/components/schemas/"+name, s.Value)
	}
	slices.Sort(out)
	return out
}
