package server

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The /api-docs page: the OpenAPI description read into the few structures
// it needs and rendered with html/template. Only what our spec uses is
// read (local $refs, objects, arrays, maps, enums).

// ordered is a YAML mapping read in file order.
type ordered[T any] []keyed[T]

type keyed[T any] struct {
	Key string
	Val T
}

func (o *ordered[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var v T
		if err := n.Content[i+1].Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", n.Content[i].Value, err)
		}
		*o = append(*o, keyed[T]{n.Content[i].Value, v})
	}
	return nil
}

type oaSchema struct {
	Ref         string             `yaml:"$ref"`
	Type        string             `yaml:"type"`
	Format      string             `yaml:"format"`
	Description string             `yaml:"description"`
	Pattern     string             `yaml:"pattern"`
	Nullable    bool               `yaml:"nullable"`
	Enum        []any              `yaml:"enum"`
	Required    []string           `yaml:"required"`
	Properties  ordered[*oaSchema] `yaml:"properties"`
	Items       *oaSchema          `yaml:"items"`
	Additional  yaml.Node          `yaml:"additionalProperties"`
	MinItems    *int               `yaml:"minItems"`
	MaxItems    *int               `yaml:"maxItems"`
}

type oaParam struct {
	Ref         string    `yaml:"$ref"`
	Name        string    `yaml:"name"`
	In          string    `yaml:"in"`
	Description string    `yaml:"description"`
	Required    bool      `yaml:"required"`
	Schema      *oaSchema `yaml:"schema"`
}

type oaContent = ordered[struct {
	Schema *oaSchema `yaml:"schema"`
}]

type oaResponse struct {
	Ref         string    `yaml:"$ref"`
	Description string    `yaml:"description"`
	Required    bool      `yaml:"required"`
	Content     oaContent `yaml:"content"`
}

type oaOperation struct {
	Tags        []string             `yaml:"tags"`
	OperationID string               `yaml:"operationId"`
	Summary     string               `yaml:"summary"`
	Description string               `yaml:"description"`
	Parameters  []*oaParam           `yaml:"parameters"`
	RequestBody *oaResponse          `yaml:"requestBody"`
	Responses   ordered[*oaResponse] `yaml:"responses"`
}

type oaSpec struct {
	Info struct {
		Title, Version, Description string
	} `yaml:"info"`
	Tags []struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	} `yaml:"tags"`
	Paths      ordered[ordered[*oaOperation]] `yaml:"paths"`
	Components struct {
		Parameters    map[string]*oaParam    `yaml:"parameters"`
		Responses     map[string]*oaResponse `yaml:"responses"`
		RequestBodies map[string]*oaResponse `yaml:"requestBodies"`
		Schemas       ordered[*oaSchema]     `yaml:"schemas"`
	} `yaml:"components"`
}

// The page's view of the spec.
type (
	docsPage struct {
		Title, Version string
		Intro          []template.HTML
		Groups         []docsGroup
		Schemas        []docsSchema
	}
	docsGroup struct {
		Name, Anchor string
		Desc         template.HTML
		Ops          []docsOp
	}
	docsOp struct {
		Method, Path, Anchor string
		Summary              template.HTML
		Desc                 []template.HTML
		Params, Responses    []docsField
		Body                 *docsField
	}
	// docsField is a parameter, a response or a property.
	docsField struct {
		Name, In string
		Type     template.HTML
		Required bool
		Desc     template.HTML
	}
	docsSchema struct {
		Name   string
		Type   template.HTML
		Desc   []template.HTML
		Props  []docsField
		Extra  template.HTML
		Closed bool
	}
)

// renderAPIDocs renders the page of an OpenAPI description.
func renderAPIDocs(spec []byte, page string) ([]byte, error) {
	var s oaSpec
	if err := yaml.Unmarshal(spec, &s); err != nil {
		return nil, fmt.Errorf("openapi spec: %w", err)
	}
	view, err := s.view()
	if err != nil {
		return nil, err
	}
	t, err := template.New("api-docs").Parse(page)
	if err != nil {
		return nil, fmt.Errorf("api-docs template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, view); err != nil {
		return nil, fmt.Errorf("api-docs template: %w", err)
	}
	return buf.Bytes(), nil
}

func (s *oaSpec) view() (*docsPage, error) {
	v := &docsPage{Title: s.Info.Title, Version: s.Info.Version, Intro: paragraphs(s.Info.Description)}
	groups := map[string]*docsGroup{}
	for _, t := range s.Tags {
		v.Groups = append(v.Groups, docsGroup{Name: t.Name, Anchor: "tag-" + anchorText(t.Name), Desc: inlineText(t.Description)})
	}
	for i := range v.Groups {
		groups[v.Groups[i].Name] = &v.Groups[i]
	}
	for _, path := range s.Paths {
		for _, m := range path.Val {
			op, err := s.opView(path.Key, m.Key, m.Val)
			if err != nil {
				return nil, err
			}
			tag := "Other"
			if len(m.Val.Tags) > 0 {
				tag = m.Val.Tags[0]
			}
			g := groups[tag]
			if g == nil {
				v.Groups = append(v.Groups, docsGroup{Name: tag, Anchor: "tag-" + anchorText(tag)})
				clear(groups) // the slice moved; rebuild the index
				for i := range v.Groups {
					groups[v.Groups[i].Name] = &v.Groups[i]
				}
				g = groups[tag]
			}
			g.Ops = append(g.Ops, op)
		}
	}
	for _, sc := range s.Components.Schemas {
		v.Schemas = append(v.Schemas, schemaView(sc.Key, sc.Val))
	}
	return v, nil
}

func (s *oaSpec) opView(path, method string, o *oaOperation) (docsOp, error) {
	// operationIds are unique (the loader checks); paths alone are not
	// (/api/v2 and /api/v2/).
	anchor := "op-" + anchorText(o.OperationID)
	if o.OperationID == "" {
		anchor = "op-" + method + "-" + anchorText(path)
	}
	op := docsOp{Method: strings.ToUpper(method), Path: path, Anchor: anchor, Summary: inlineText(o.Summary), Desc: paragraphs(o.Description)}
	for _, p := range o.Parameters {
		if p.Ref != "" {
			p = s.Components.Parameters[refName(p.Ref)]
			if p == nil {
				return op, fmt.Errorf("%s %s: unknown parameter reference", method, path)
			}
		}
		op.Params = append(op.Params, docsField{Name: p.Name, In: p.In, Type: typeHTML(p.Schema), Required: p.Required || p.In == "path",
			Desc: inlineText(p.Description)})
	}
	if b := o.RequestBody; b != nil {
		if b.Ref != "" {
			if b = s.Components.RequestBodies[refName(b.Ref)]; b == nil {
				return op, fmt.Errorf("%s %s: unknown request body reference", method, path)
			}
		}
		f := contentField("body", b)
		f.Required = b.Required
		op.Body = &f
	}
	for _, r := range o.Responses {
		resp := r.Val
		if resp.Ref != "" {
			if resp = s.Components.Responses[refName(resp.Ref)]; resp == nil {
				return op, fmt.Errorf("%s %s %s: unknown response reference", method, path, r.Key)
			}
		}
		op.Responses = append(op.Responses, contentField(r.Key, resp))
	}
	return op, nil
}

// contentField shows a response or request body: its description and the
// schema of its (first) media type.
func contentField(name string, r *oaResponse) docsField {
	f := docsField{Name: name, Desc: inlineText(r.Description)}
	if len(r.Content) > 0 {
		f.In = r.Content[0].Key
		f.Type = typeHTML(r.Content[0].Val.Schema)
	}
	return f
}

func schemaView(name string, s *oaSchema) docsSchema {
	v := docsSchema{Name: name, Desc: paragraphs(s.Description)}
	if len(s.Properties) == 0 {
		v.Type = typeHTML(s)
	}
	for _, p := range s.Properties {
		v.Props = append(v.Props, docsField{Name: p.Key, Type: typeHTML(p.Val), Required: slices.Contains(s.Required, p.Key),
			Desc: inlineText(p.Val.Description)})
	}
	if len(s.Properties) > 0 {
		switch s.Additional.Kind {
		case yaml.ScalarNode:
			v.Closed = s.Additional.Value == "false"
			if !v.Closed {
				v.Extra = "More properties may appear (passed through from the node)."
			}
		case yaml.MappingNode:
			v.Extra = "Other properties: " + typeHTML(additional(s))
		}
	}
	return v
}

// additional returns the schema of a map's values, nil if there is none.
func additional(s *oaSchema) *oaSchema {
	if s.Additional.Kind != yaml.MappingNode {
		return nil
	}
	var a oaSchema
	if err := s.Additional.Decode(&a); err != nil {
		return nil
	}
	return &a
}

// typeHTML describes a schema's type in a line, linking named schemas.
func typeHTML(s *oaSchema) template.HTML {
	if s == nil {
		return "any"
	}
	var b strings.Builder
	switch {
	case s.Ref != "":
		n := html.EscapeString(refName(s.Ref))
		fmt.Fprintf(&b, `<a href="#schema-%s">%s</a>`, n, n)
	case s.Type == "array":
		b.WriteString("array of " + string(typeHTML(s.Items)))
		if s.MinItems != nil && s.MaxItems != nil && *s.MinItems == *s.MaxItems {
			fmt.Fprintf(&b, " (%d items)", *s.MinItems)
		}
	case s.Type == "object" && len(s.Properties) == 0 && additional(s) != nil:
		b.WriteString("map of string to " + string(typeHTML(additional(s))))
	case s.Type == "":
		b.WriteString("any")
	default:
		b.WriteString(html.EscapeString(s.Type))
		if s.Format != "" {
			b.WriteString(" (" + html.EscapeString(s.Format) + ")")
		}
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = "<code>" + html.EscapeString(fmt.Sprint(e)) + "</code>"
		}
		b.WriteString(": one of " + strings.Join(vals, ", "))
	}
	if s.Pattern != "" {
		b.WriteString(", pattern <code>" + html.EscapeString(s.Pattern) + "</code>")
	}
	if s.Nullable {
		b.WriteString(" or null")
	}
	return template.HTML(b.String()) //nolint:gosec // built from escaped parts
}

func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// anchorText turns a path into an id fragment.
func anchorText(s string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, s), "-")
}

// inlineText escapes a description and shows `code` spans as code.
func inlineText(s string) template.HTML {
	parts := strings.Split(html.EscapeString(strings.TrimSpace(s)), "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1:
			b.WriteString("<code>" + p + "</code>")
		case i%2 == 1:
			b.WriteString("`" + p) // an unpaired backtick
		default:
			b.WriteString(p)
		}
	}
	return template.HTML(b.String()) //nolint:gosec // escaped above
}

// paragraphs splits a description at blank lines.
func paragraphs(s string) []template.HTML {
	var out []template.HTML
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, inlineText(strings.Join(strings.Fields(p), " ")))
		}
	}
	return out
}
