package gateway

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Envelope fields an agent sets as tool arguments. No tool's input schema
// uses these names, so they are lifted out of the arguments before the
// input reaches the tool; everything else of the envelope (actor, user,
// correlation id) is the gateway's, never the caller's.
const (
	argIdempotencyKey = "idempotency_key"
	argDryRun         = "dry_run"
)

// mcpTool is the MCP view of one ToolSpec: one source of truth, the
// registry's spec and the schema files it names.
func mcpTool(spec toolkit.Spec, schemas fs.FS) (*mcp.Tool, error) {
	in, err := inputSchema(spec, schemas)
	if err != nil {
		return nil, err
	}
	out, err := outputSchema(spec, schemas)
	if err != nil {
		return nil, err
	}
	a := spec.Annotations
	destructive, openWorld := a.Destructive, a.OpenWorld
	return &mcp.Tool{
		Name:        spec.Name,
		Title:       titleOf(spec.Name),
		Description: spec.Description,
		InputSchema: in, OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:        titleOf(spec.Name),
			ReadOnlyHint: a.ReadOnly, DestructiveHint: &destructive,
			IdempotentHint: a.Idempotent, OpenWorldHint: &openWorld,
		},
	}, nil
}

// titleOf turns pricing.get_realtime_quote into "Pricing: get realtime quote".
func titleOf(name string) string {
	area, verb, _ := strings.Cut(name, ".")
	if area == "" {
		return name
	}
	return strings.ToUpper(area[:1]) + area[1:] + ": " + strings.ReplaceAll(verb, "_", " ")
}

func readSchema(schemas fs.FS, file string) (map[string]any, error) {
	raw, err := fs.ReadFile(schemas, file)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

// inputSchema is the tool's input schema plus the envelope arguments; a
// write tool requires idempotency_key (docs/envelope.md#idempotency).
func inputSchema(spec toolkit.Spec, schemas fs.FS) (map[string]any, error) {
	s, err := readSchema(schemas, spec.InputSchema)
	if err != nil {
		return nil, err
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	for _, name := range []string{argIdempotencyKey, argDryRun} {
		if _, clash := props[name]; clash {
			return nil, fmt.Errorf("tool %s: input property %q is the envelope's", spec.Name, name)
		}
	}
	props[argIdempotencyKey] = map[string]any{
		"type": "string", "minLength": 8, "maxLength": 128, "pattern": "^[A-Za-z0-9._:-]+$",
		"description": "Your key for this call (e.g. a UUID): the same key returns the same answer and never runs a write twice. Required for write tools.",
	}
	props[argDryRun] = map[string]any{"type": "boolean", "description": "Validate only; a write tool writes nothing."}
	if !spec.Annotations.ReadOnly {
		req, _ := s["required"].([]any)
		s["required"] = append(req, argIdempotencyKey)
	}
	s["type"] = "object"
	return s, nil
}

// outputSchema describes what structuredContent holds: the response
// envelope, whose data is the tool's output schema (its definitions are
// hoisted so "#/definitions/…" references still resolve).
func outputSchema(spec toolkit.Spec, schemas fs.FS) (map[string]any, error) {
	data, err := readSchema(schemas, spec.OutputSchema)
	if err != nil {
		return nil, err
	}
	defs, _ := data["definitions"].(map[string]any)
	for _, k := range []string{"definitions", "$schema", "$id"} {
		delete(data, k)
	}
	s := map[string]any{
		"$schema":  "http://json-schema.org/draft-07/schema#",
		"type":     "object",
		"required": []any{"ok", "status", "tool"},
		"properties": map[string]any{
			"ok":          map[string]any{"type": "boolean"},
			"status":      map[string]any{"enum": []any{"ok", "degraded", "empty", "error"}},
			"tool":        map[string]any{"type": "string"},
			"version":     map[string]any{"type": "string"},
			"data":        data,
			"warnings":    map[string]any{"type": []any{"array", "null"}, "items": map[string]any{"type": "string"}},
			"error":       map[string]any{"type": "object", "required": []any{"code", "message"}},
			"ttl_seconds": map[string]any{"type": "integer"},
			"evidence":    map[string]any{"type": "object"},
			"meta":        map[string]any{"type": "object"},
		},
	}
	if defs != nil {
		s["definitions"] = defs
	}
	return s, nil
}

// splitArguments takes the envelope arguments out of args; the rest is the
// tool's input.
func splitArguments(args map[string]any) (input map[string]any, key string, dryRun bool, bad *toolkit.Error) {
	input = make(map[string]any, len(args))
	for k, v := range args {
		input[k] = v
	}
	if v, ok := input[argIdempotencyKey]; ok {
		s, isStr := v.(string)
		if !isStr {
			return nil, "", false, toolkit.Errorf(toolkit.InvalidArgument, "idempotency_key must be a string").
				WithDetail("fields", []string{"idempotency_key: must be a string"})
		}
		key = s
		delete(input, argIdempotencyKey)
	}
	if v, ok := input[argDryRun]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return nil, "", false, toolkit.Errorf(toolkit.InvalidArgument, "dry_run must be a boolean").
				WithDetail("fields", []string{"dry_run: must be a boolean"})
		}
		dryRun = b
		delete(input, argDryRun)
	}
	return input, key, dryRun, nil
}
