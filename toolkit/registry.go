package toolkit

import (
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"github.com/xeipuuv/gojsonschema"
)

// Tool is a registered tool: its spec, its compiled schemas and its handler.
type Tool struct {
	Spec    Spec
	input   *gojsonschema.Schema
	output  *gojsonschema.Schema
	handler Handler
}

// Registry holds the tools a worker serves. Schemas are compiled once, at
// registration; a tool can be disabled at run time without a redeploy.
type Registry struct {
	schemas *SchemaSet

	// envelope validates request envelopes when the schema folder has
	// envelope.request.json (the real one does; test folders may not).
	envelope *gojsonschema.Schema

	mu       sync.RWMutex
	tools    map[string]*Tool
	disabled map[string]bool
}

// NewRegistry returns an empty registry that reads schema files from schemas
// (normally schemas.FS, the embedded schemas/ folder).
func NewRegistry(schemas fs.FS) *Registry {
	r := &Registry{schemas: schemaSetFor(schemas), tools: map[string]*Tool{}, disabled: map[string]bool{}}
	if _, err := fs.Stat(schemas, envelopeSchema); err == nil {
		env, err := r.schemas.Schema(envelopeSchema)
		if err != nil {
			panic(fmt.Sprintf("%s does not compile: %v", envelopeSchema, err)) // a build defect, caught by every test
		}
		r.envelope = env
	}
	return r
}

const envelopeSchema = "envelope.request.json"

// Register checks the spec, loads and compiles both schemas and adds the
// tool. It refuses a duplicate name, a contradictory spec, and a schema
// without $schema and $id.
func (r *Registry) Register(spec Spec, h Handler) error {
	if h == nil {
		return fmt.Errorf("tool %s: nil handler", spec.Name)
	}
	if err := spec.check(); err != nil {
		return err
	}
	in, err := r.schemas.Schema(spec.InputSchema)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", spec.Name, err)
	}
	out, err := r.schemas.Schema(spec.OutputSchema)
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", spec.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("tool %s is already registered", spec.Name)
	}
	r.tools[spec.Name] = &Tool{Spec: spec, input: in, output: out, handler: h}
	return nil
}

// MustRegister is Register for start-up code, where a bad spec is a bug.
func (r *Registry) MustRegister(spec Spec, h Handler) {
	if err := r.Register(spec, h); err != nil {
		panic(err)
	}
}

// SetEnabled turns a registered tool on or off; a disabled tool is refused
// in preflight with FORBIDDEN.
func (r *Registry) SetEnabled(name string, enabled bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return fmt.Errorf("tool %s is not registered", name)
	}
	r.disabled[name] = !enabled
	return nil
}

// lookup returns the tool and whether it is enabled.
func (r *Registry) lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t := r.tools[name]
	return t, t != nil && !r.disabled[name]
}

// Spec returns a registered tool's spec.
func (r *Registry) Spec(name string) (Spec, bool) {
	t, _ := r.lookup(name)
	if t == nil {
		return Spec{}, false
	}
	return t.Spec, true
}

// Specs lists every registered spec by name, for tools/list and docs.
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Spec, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t.Spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// validate checks doc against s and names every failing field. It returns
// doc decoded too, which the invoker sanitises and digests without
// decoding the same bytes again (jsontree.go).
func validate(s *gojsonschema.Schema, doc []byte) (tree any, fields []string, err error) {
	if tree, err = decodeJSON(doc); err != nil {
		return nil, nil, err
	}
	fields, err = validateTree(s, tree)
	return tree, fields, err
}

// validateTree is validate of a document already decoded by decodeJSON,
// which decodes as gojsonschema's bytes loader does (jsontree.go).
func validateTree(s *gojsonschema.Schema, tree any) ([]string, error) {
	res, err := s.Validate(gojsonschema.NewRawLoader(tree))
	if err != nil {
		return nil, err
	}
	if res.Valid() {
		return nil, nil
	}
	var fields []string
	for _, e := range res.Errors() {
		fields = append(fields, e.Field()+": "+e.Description())
	}
	sort.Strings(fields)
	return fields, nil
}
