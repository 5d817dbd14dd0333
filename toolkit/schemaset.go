package toolkit

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/xeipuuv/gojsonschema"

	"github.com/cartwright-dev/cartwright/schemas"
)

// SchemaSet loads and compiles the schema files of one folder, each at most
// once per process, and hands the same compiled schema to every user: the
// registry's preflight, and the start-side checks of the client and the
// workflows (which must refuse exactly what the tools will refuse).
type SchemaSet struct {
	fsys fs.FS

	mu       sync.Mutex
	compiled map[string]*gojsonschema.Schema
}

// NewSchemaSet returns an empty set over fsys; schemas compile on first use.
func NewSchemaSet(fsys fs.FS) *SchemaSet {
	return &SchemaSet{fsys: fsys, compiled: map[string]*gojsonschema.Schema{}}
}

var builtinSchemas = NewSchemaSet(schemas.FS)

// BuiltinSchemas is the set over the embedded schemas/ folder, shared by
// every registry built on schemas.FS and by the start-side checks.
func BuiltinSchemas() *SchemaSet { return builtinSchemas }

// schemaSetFor shares the built-in set when fsys is the embedded folder, so
// a process compiles each real schema once however many registries it has.
func schemaSetFor(fsys fs.FS) *SchemaSet {
	// embed.FS is comparable; a map-backed test folder has another type and
	// compares unequal without panicking.
	if fsys == fs.FS(schemas.FS) {
		return builtinSchemas
	}
	return NewSchemaSet(fsys)
}

// Schema returns the compiled schema of file name. A schema must declare
// $schema and $id.
func (s *SchemaSet) Schema(name string) (*gojsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.compiled[name]; ok {
		return c, nil
	}
	raw, err := fs.ReadFile(s.fsys, name)
	if err != nil {
		return nil, err
	}
	var head struct {
		Schema string `json:"$schema"`
		ID     string `json:"$id"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if head.Schema == "" || head.ID == "" {
		return nil, fmt.Errorf("%s: a schema must declare $schema and $id", name)
	}
	c, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		return nil, err
	}
	s.compiled[name] = c
	return c, nil
}

// CheckToolInput validates input (any JSON-encodable value) against the
// input schema of tool, as the invoker's preflight will: nil, or
// INVALID_ARGUMENT naming every failing field. rename maps the schema's
// field path (e.g. "destination.name") to the caller's name for it; nil
// keeps it.
func (s *SchemaSet) CheckToolInput(tool string, input any, rename func(string) string) error {
	sch, err := s.Schema(tool + ".input.json")
	if err != nil {
		return Errorf(UpstreamError, "input schema of %s: %v", tool, err)
	}
	doc, err := json.Marshal(input)
	if err != nil {
		return Errorf(InvalidArgument, "input of %s is not JSON: %v", tool, err)
	}
	res, err := sch.Validate(gojsonschema.NewBytesLoader(doc))
	if err != nil {
		return Errorf(InvalidArgument, "input of %s cannot be validated: %v", tool, err)
	}
	if res.Valid() {
		return nil
	}
	var fields, msgs []string
	for _, e := range res.Errors() {
		f := e.Field()
		if rename != nil {
			f = rename(f)
		}
		fields = append(fields, f)
		msgs = append(msgs, f+": "+e.Description())
	}
	sort.Strings(fields)
	sort.Strings(msgs)
	return Errorf(InvalidArgument, "%s", strings.Join(msgs, "; ")).
		WithDetail("fields", slices.Compact(fields)).WithRecovery("fix the named fields and call again")
}

// CheckRequest is the request-envelope check of every tool call
// (docs/envelope.md#request-envelope): the mandatory fields present, actor.type one of user, agent,
// system, and the envelope valid against envelope.request.json. The
// invoker runs it in preflight; starters run it before a workflow starts.
func CheckRequest(req Request) error {
	env, err := builtinSchemas.Schema(envelopeSchema)
	if err != nil {
		return Errorf(UpstreamError, "envelope schema: %v", err)
	}
	return checkRequest(req, env)
}

// checkRequest checks req's fields, then (when env is set) the schema.
func checkRequest(req Request, env *gojsonschema.Schema) error {
	missing := req.missingFields()
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("missing %v", missing))
	}
	fields := missing
	switch req.Actor.Type {
	case "", ActorUser, ActorAgent, ActorSystem:
	default:
		// Present but wrong is not "missing": say what it may be.
		problems = append(problems, fmt.Sprintf("actor.type %q is invalid, one of user, agent, system", req.Actor.Type))
		fields = append(fields, "actor.type")
	}
	if len(problems) > 0 {
		return Errorf(InvalidArgument, "request envelope: %s", strings.Join(problems, "; ")).WithDetail("fields", fields)
	}
	if env == nil {
		return nil
	}
	var err error
	if tree, ok := requestTree(req); ok {
		problems, err = validateTree(env, tree)
	} else {
		var rawReq []byte
		if rawReq, err = json.Marshal(req); err != nil {
			return Errorf(InvalidArgument, "request envelope is not JSON: %v", err)
		}
		_, problems, err = validate(env, rawReq)
	}
	if err != nil {
		return Errorf(InvalidArgument, "request envelope cannot be validated: %v", err)
	}
	if len(problems) > 0 {
		names := make([]string, 0, len(problems))
		for i, p := range problems {
			name, desc, _ := strings.Cut(p, ": ")
			name = strings.TrimPrefix(name, "(root).")
			names = append(names, name)
			// Each problem starts with its field, said once.
			if !strings.HasPrefix(desc, name) {
				desc = name + ": " + desc
			}
			problems[i] = desc
		}
		return Errorf(InvalidArgument, "request envelope is invalid: %s", strings.Join(problems, "; ")).
			WithDetail("fields", slices.Compact(names)).WithDetail("problems", problems)
	}
	return nil
}
