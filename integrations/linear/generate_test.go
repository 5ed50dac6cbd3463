package linear

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/sessionvault/sessionvault/integrations/linear/schema"
)

// TestGeneratedIsCurrent regenerates the client from genqlient.yaml,
// schema/schema.graphql and operations.graphql into a temporary directory
// (same relative layout) and
// requires generated.go to be byte-identical: edit operations.graphql (or
// refresh the schema) without `make generate` and this fails.
func TestGeneratedIsCurrent(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goBin = filepath.Join(root, "bin", "go")
		} else {
			t.Fatalf("go command not found: %v", err)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"genqlient.yaml", schemaFile, "operations.graphql"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Run inside this module (so `go tool` finds the genqlient tool
	// directive of go.mod) on the copied config; paths in the config are
	// relative to the config file, so the output lands in dir.
	cmd := exec.Command(goBin, "tool", "genqlient", filepath.Join(dir, "genqlient.yaml"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool genqlient: %v\n%s", err, out.String())
	}
	fresh, err := os.ReadFile(filepath.Join(dir, "generated.go"))
	if err != nil {
		t.Fatalf("genqlient wrote no generated.go: %v\n%s", err, out.String())
	}
	have, err := os.ReadFile("generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, fresh) {
		t.Fatalf("generated.go is out of date with operations.graphql / schema/schema.graphql / genqlient.yaml; run `make generate`\n%s",
			firstDiff(have, fresh))
	}
}

func firstDiff(have, want []byte) string {
	h := strings.Split(string(have), "\n")
	w := strings.Split(string(want), "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl || i >= len(h) || i >= len(w) {
			return fmt.Sprintf("first difference at line %d:\n  generated.go: %q\n  regenerated:  %q", i+1, hl, wl)
		}
	}
	return "(files differ)"
}

// schemaFile is the one copy of Linear's schema, as genqlient.yaml names it
// (package schema embeds it for lineartest).
const schemaFile = "schema/schema.graphql"

var (
	schemaOnce sync.Once
	schemaVal  *ast.Schema
	schemaErr  error
)

func loadSchema(t *testing.T) *ast.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		s, gerr := gqlparser.LoadSchema(&ast.Source{Name: schemaFile, Input: schema.SDL()})
		if gerr != nil {
			schemaErr = gerr
			return
		}
		schemaVal = s
	})
	if schemaErr != nil {
		t.Fatalf("load %s: %v", schemaFile, schemaErr)
	}
	return schemaVal
}

func loadOperations(t *testing.T, schema *ast.Schema, name, src string) *ast.QueryDocument {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(schema, src)
	if len(errs) > 0 {
		for _, e := range errs {
			t.Errorf("%s: %v", name, e)
		}
		t.FailNow()
	}
	return doc
}

// TestNoDeprecatedFields validates operations.graphql against the schema and
// fails naming every @deprecated field, argument, input field or enum value
// that an operation uses (genqlient does not warn about those).
func TestNoDeprecatedFields(t *testing.T) {
	schema := loadSchema(t)
	src, err := os.ReadFile("operations.graphql")
	if err != nil {
		t.Fatal(err)
	}
	doc := loadOperations(t, schema, "operations.graphql", string(src))
	if len(doc.Operations) == 0 {
		t.Fatal("operations.graphql has no operations")
	}
	for _, op := range doc.Operations {
		for _, p := range deprecatedUses(op) {
			t.Errorf("operation %s uses deprecated %s", op.Name, p)
		}
	}
}

// TestDeprecationLintWorks makes sure the lint above would notice a
// deprecated member (so a silently broken walker cannot pass).
func TestDeprecationLintWorks(t *testing.T) {
	schema := loadSchema(t)
	doc := loadOperations(t, schema, "probe", `
query Probe {
  issueLabels(first: 1) { nodes { id organization { id } } }
}`)
	got := deprecatedUses(doc.Operations[0])
	if len(got) != 1 || !strings.Contains(got[0], "IssueLabel.organization") {
		t.Fatalf("lint found %q, want exactly field IssueLabel.organization", got)
	}
}

// deprecatedUses lists the deprecated schema members op refers to.
func deprecatedUses(op *ast.OperationDefinition) []string {
	var out []string
	var walkValue func(v *ast.Value)
	walkValue = func(v *ast.Value) {
		if v == nil {
			return
		}
		switch v.Kind {
		case ast.ObjectValue:
			for _, c := range v.Children {
				if v.Definition != nil {
					if fd := v.Definition.Fields.ForName(c.Name); fd != nil {
						if d := fd.Directives.ForName("deprecated"); d != nil {
							out = append(out, fmt.Sprintf("input field %s.%s (%s)", v.Definition.Name, c.Name, reason(d)))
						}
					}
				}
				walkValue(c.Value)
			}
		case ast.ListValue:
			for _, c := range v.Children {
				walkValue(c.Value)
			}
		case ast.EnumValue:
			if v.Definition != nil {
				if ev := v.Definition.EnumValues.ForName(v.Raw); ev != nil {
					if d := ev.Directives.ForName("deprecated"); d != nil {
						out = append(out, fmt.Sprintf("enum value %s.%s (%s)", v.Definition.Name, v.Raw, reason(d)))
					}
				}
			}
		}
	}
	for _, vd := range op.VariableDefinitions {
		walkValue(vd.DefaultValue)
	}
	seen := map[*ast.FragmentDefinition]bool{}
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if s.Definition != nil {
					if d := s.Definition.Directives.ForName("deprecated"); d != nil {
						owner := "?"
						if s.ObjectDefinition != nil {
							owner = s.ObjectDefinition.Name
						}
						out = append(out, fmt.Sprintf("field %s.%s (%s)", owner, s.Name, reason(d)))
					}
					for _, a := range s.Arguments {
						if ad := s.Definition.Arguments.ForName(a.Name); ad != nil {
							if d := ad.Directives.ForName("deprecated"); d != nil {
								out = append(out, fmt.Sprintf("argument %s(%s:) (%s)", s.Name, a.Name, reason(d)))
							}
						}
						walkValue(a.Value)
					}
				}
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Definition != nil && !seen[s.Definition] {
					seen[s.Definition] = true
					walk(s.Definition.SelectionSet)
				}
			}
		}
	}
	walk(op.SelectionSet)
	return out
}

func reason(d *ast.Directive) string {
	if a := d.Arguments.ForName("reason"); a != nil && a.Value != nil {
		return a.Value.Raw
	}
	return "no reason given"
}
