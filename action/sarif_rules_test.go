package action

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Every check code the audit or the Action can report has a rule text for
// code scanning: the codes are read from the source, so a new one without
// a description fails here.
func TestEveryCodeHasARuleText(t *testing.T) {
	for _, file := range []string{"../audit/verdict.go", "source.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ast.Inspect(f, func(node ast.Node) bool {
			vs, ok := node.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				code, _ := strconv.Unquote(lit.Value)
				n++
				if ruleText[code] == "" {
					t.Errorf("%s (%s in %s) has no rule text in sarif.go", code, name.Name, file)
				}
			}
			return true
		})
		if n == 0 {
			t.Fatalf("no Code constants found in %s", file)
		}
	}
}
