package errs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// Every code's Go name is its stable name in CamelCase (E1612 is
// UpdateValidationFailed, UPDATE_VALIDATION_FAILED), and ids and names are
// unique.
func TestGoNamesMatchStableNames(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errs.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids, names, n := map[string]bool{}, map[string]bool{}, 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 2 {
			return true
		}
		if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return true
		}
		code := strings.Trim(lit.Elts[0].(*ast.BasicLit).Value, `"`)
		stable := strings.Trim(lit.Elts[1].(*ast.BasicLit).Value, `"`)
		var camel strings.Builder
		for _, w := range strings.Split(stable, "_") {
			camel.WriteString(w[:1] + strings.ToLower(w[1:]))
		}
		if got := vs.Names[0].Name; got != camel.String() {
			t.Errorf("%s %s is named %s in Go, want %s", code, stable, got, camel.String())
		}
		if ids[code] || names[stable] {
			t.Errorf("%s %s is not unique", code, stable)
		}
		ids[code], names[stable] = true, true
		n++
		return true
	})
	if n < 20 {
		t.Fatalf("found %d codes", n)
	}
}

// Every code is listed once in All, with what it means and what to do: the
// error reference is made from them.
func TestEveryCodeDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All {
		if seen[c.ID] {
			t.Errorf("%s listed twice", c.ID)
		}
		seen[c.ID] = true
		if d := DocOf(c); d.Meaning == "" || d.Fix == "" {
			t.Errorf("%s %s has no meaning or fix", c.ID, c.Name)
		}
	}
	if len(docs) != len(All) {
		t.Errorf("%d codes documented, %d in All", len(docs), len(All))
	}
}
