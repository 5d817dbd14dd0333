package registry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// TestRegistryListsEveryWorkflow: a workflow missing from Registry could
// not be audited or replayed in CI, so every exported function of the flow
// packages (workflows/*) shaped like a workflow — func(workflow.Context,
// ...) (..., error) — and every such method of their spec-bound Flow types
// must be in it.
func TestRegistryListsEveryWorkflow(t *testing.T) {
	registered := map[string]bool{}
	for name, fn := range Registry(flowtest.TestSpecs()) {
		full := strings.TrimSuffix(runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name(), "-fm")
		registered[full[strings.LastIndex(full, ".")+1:]] = true
		if name == "" {
			t.Fatal("a workflow is registered without a name")
		}
	}
	files, _ := filepath.Glob("../*/*.go")
	if len(files) < 10 {
		t.Fatalf("found only %d files of the flow packages", len(files))
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || (fd.Recv != nil && !boundMethod(fd)) || !fd.Name.IsExported() || !isWorkflowShape(fd.Type) {
				continue
			}
			if !registered[fd.Name.Name] {
				t.Errorf("%s (%s) looks like a workflow but is not in Registry()", fd.Name.Name, f)
			}
		}
	}
}

// boundMethod reports whether fd is a method of a flow's spec-bound Flow.
func boundMethod(fd *ast.FuncDecl) bool {
	id, ok := fd.Recv.List[0].Type.(*ast.Ident)
	return ok && id.Name == "Flow"
}

func isWorkflowShape(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) == 0 || ft.Results == nil || len(ft.Results.List) == 0 {
		return false
	}
	sel, ok := ft.Params.List[0].Type.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Context" {
		return false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "workflow" {
		return false
	}
	last, ok := ft.Results.List[len(ft.Results.List)-1].Type.(*ast.Ident)
	return ok && last.Name == "error"
}
