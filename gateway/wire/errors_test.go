package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestReasonsAreOneClosedList (MCP-INV-09, ERR-INV-03): the Reason
// constants declared in the package are exactly Reasons(), each
// upper-case with underscores, unique, under one code.
func TestReasonsAreOneClosedList(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Reason" {
				continue
			}
			for _, v := range vs.Values {
				declared = append(declared, strings.Trim(v.(*ast.BasicLit).Value, `"`))
			}
		}
	}
	sort.Strings(declared)
	var listed []string
	naming := regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)
	for _, r := range Reasons() {
		listed = append(listed, string(r))
		if !naming.MatchString(string(r)) {
			t.Fatalf("reason %s is not UPPER_SNAKE", r)
		}
		if CategoryOf(CodeOf(r)) == "" {
			t.Fatalf("reason %s has no category", r)
		}
	}
	if strings.Join(declared, ",") != strings.Join(listed, ",") {
		t.Fatalf("declared %v\nlisted   %v", declared, listed)
	}
	// ERR-INV-02: the codes map onto the five categories one to one.
	seen := map[Category]int64{}
	for _, code := range []int64{CodeParseError, CodeInvalidRequest, CodeMethodNotFound,
		CodeInvalidParams, CodeBusiness, CodeDependency, CodeInternal} {
		c := CategoryOf(code)
		if c == "" {
			t.Fatalf("code %d has no category", code)
		}
		if prev, dup := seen[c]; dup && c != CategoryProtocol {
			t.Fatalf("category %s has codes %d and %d", c, prev, code)
		}
		seen[c] = code
	}
}
