// Command k8sschema writes the Kubernetes JSON schemas kubeconform validates
// against, offline: the OpenAPI spec comes from the Go module
// k8s.io/kubernetes (api/openapi-spec/swagger.json, fetched by `go mod
// download` through the Go module proxy and checked against the checksum
// database like any module), and is turned into kubeconform's "strict"
// layout: one file per kind, named {kind}[-{group}]-{version}.json, each
// referring into one _definitions.json. Strict means an object with listed
// properties allows no others (a misspelt field fails), as kubeconform
// -strict expects of its schemas.
//
//	k8sschema -version v1.33.4 -out .bin/k8s-schemas/v1.33.4
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	version := flag.String("version", "", "Kubernetes version (a k8s.io/kubernetes module version, e.g. v1.33.4)")
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if *version == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschema:", err)
		os.Exit(1)
	}
}

const quantity = "io.k8s.apimachinery.pkg.api.resource.Quantity"

func run(version, out string) error {
	dir, err := moduleDir("k8s.io/kubernetes@" + version)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "api", "openapi-spec", "swagger.json"))
	if err != nil {
		return err
	}
	var spec struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("swagger.json: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	defs := map[string]any{}
	for name, d := range spec.Definitions {
		defs[name] = strict(d)
	}
	// A Quantity is a string on the wire, but YAML's `cpu: 1` is a number
	// the API server accepts.
	if q, ok := defs[quantity].(map[string]any); ok {
		delete(q, "type")
		q["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}
	}
	if err := writeJSON(filepath.Join(out, "_definitions.json"), map[string]any{"definitions": defs}); err != nil {
		return err
	}
	kinds := 0
	for name, d := range spec.Definitions {
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			kind, _ := gvk["kind"].(string)
			group, _ := gvk["group"].(string)
			ver, _ := gvk["version"].(string)
			file := strings.ToLower(kind)
			if group != "" {
				file += "-" + strings.ToLower(strings.Split(group, ".")[0])
			}
			file += "-" + strings.ToLower(ver) + ".json"
			if err := writeJSON(filepath.Join(out, file), defs[name]); err != nil {
				return err
			}
			kinds++
		}
	}
	fmt.Printf("k8sschema: %d definitions, %d kinds of Kubernetes %s in %s\n", len(defs), kinds, version, out)
	return nil
}

// moduleDir downloads a module version (or finds it in the module cache)
// and returns its directory. It runs outside any module, so the tool
// module's go.mod is left alone.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %v", modVersion, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", modVersion, m.Error)
	}
	return m.Dir, nil
}

// strict rewrites one schema node: references point into _definitions.json,
// objects with properties allow no others, and the two string-encoded
// number types (int-or-string, Quantity) accept numbers as YAML writes
// them.
func strict(node any) any {
	switch n := node.(type) {
	case map[string]any:
		out := make(map[string]any, len(n)+1)
		for k, v := range n {
			out[k] = strict(v)
		}
		if ref, ok := n["$ref"].(string); ok {
			out["$ref"] = "_definitions.json" + ref
		}
		if _, has := n["properties"]; has {
			if _, set := n["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		if n["format"] == "int-or-string" {
			delete(out, "type")
			out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = strict(v)
		}
		return out
	}
	return node
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
