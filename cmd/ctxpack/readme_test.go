package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkCodes are the verdict check codes in the source: every string
// constant named Code… in these files.
var checkCodeFiles = []string{"../../audit/verdict.go", "../../action/source.go"}

func sourceCodes(t *testing.T) []string {
	t.Helper()
	var codes []string
	fset := token.NewFileSet()
	for _, file := range checkCodeFiles {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					codes = append(codes, v)
				}
			}
			return true
		})
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// TestREADMEListsEveryAuditCode: the README's table of audit codes is the
// codes of the source, no more, no fewer.
func TestREADMEListsEveryAuditCode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- audit-codes:begin -->")
	table, _, ok2 := strings.Cut(rest, "<!-- audit-codes:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no audit-codes table between its markers")
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(listed)
	codes := sourceCodes(t)
	if len(codes) < 20 {
		t.Fatalf("only %d codes found in the source: %v", len(codes), codes)
	}
	if !slices.Equal(listed, codes) {
		t.Fatalf("README lists %v\nthe source has %v", listed, codes)
	}
}

// TestNoInternalDocumentNames: what a user reads (the README, every
// command's help and every flag's) names concepts, not the design
// documents they came from ("seed 000").
func TestNoInternalDocumentNames(t *testing.T) {
	word := regexp.MustCompile(`(?i)\bseeds?\b`)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(readme), "\n") {
		if word.MatchString(line) {
			t.Errorf("README.md:%d: %s", i+1, line)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, text := range []string{c.Use, c.Short, c.Long, c.Example} {
			if word.MatchString(text) {
				t.Errorf("%s help: %q", c.CommandPath(), text)
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if word.MatchString(f.Usage) {
				t.Errorf("%s --%s: %q", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(ioStreams{Verbosity: &verbosity{}}))
}
