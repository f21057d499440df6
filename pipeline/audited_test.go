package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pack"
)

// TestExecuteKeepsTheAuditedPack: after a run, Result.Pack is the pack the
// audit decoded from Result.JSON (the builder's copy is let go), whole:
// it serializes to exactly the bytes written and carries every file's text.
func TestExecuteKeepsTheAuditedPack(t *testing.T) {
	g := gittest.New(t)
	files := map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"héllo → wörld\") }\n",
		"README.md": "# demo\n\nünïcode and a \"quoted\" line\n",
		"util.go":   "package main\n\nfunc util() int { return 1 }\n",
	}
	for p, text := range files {
		g.Write(p, text)
	}
	g.Commit("files")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Type: "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if run.Verdict.Status != audit.StatusPass {
		t.Fatalf("verdict %+v", run.Verdict)
	}
	var buf bytes.Buffer
	if err := pack.Encode(&buf, run.Result.Pack); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), run.Result.JSON) {
		t.Fatalf("Result.Pack does not serialize to Result.JSON")
	}
	got := map[string]string{}
	for _, it := range append(append([]pack.Item(nil), run.Result.Pack.KeyFiles...), run.Result.Pack.Contents...) {
		got[it.Path] = it.Content
	}
	for p, text := range files {
		if got[p] != text {
			t.Errorf("%s: content %q, want %q", p, got[p], text)
		}
	}
}

// TestPackDecoded: the verdict of Pack, and the pack decoded from the bytes
// (none when they are not a JSON pack document).
func TestPackDecoded(t *testing.T) {
	g := gittest.New(t)
	g.Write("main.go", "package main\n\nfunc main() {}\n")
	g.Commit("base")
	run, err := Execute(context.Background(), PackOptions{Dir: g.Dir, Type: "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	in := audit.Input{Policy: run.Policy, Scanner: run.Scanner, Sensitive: audit.SensitiveFile}
	for _, tc := range []struct {
		name     string
		data     []byte
		wantPack bool
		wantFail string
	}{
		{"the built pack", run.Result.JSON, true, ""},
		{"not JSON", []byte("{not json"), false, audit.CodeSchemaInvalid},
		{"a JSON array", []byte("[]"), false, audit.CodeSchemaInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, p, err := audit.PackDecoded(context.Background(), tc.data, in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := audit.Pack(context.Background(), tc.data, in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, want) {
				t.Errorf("verdict %+v, Pack's %+v", v, want)
			}
			if codes(v.Failed) != tc.wantFail {
				t.Errorf("failed %q, want %q", codes(v.Failed), tc.wantFail)
			}
			if (p != nil) != tc.wantPack {
				t.Fatalf("pack returned: %v, want %v", p != nil, tc.wantPack)
			}
			if p != nil {
				var decoded pack.Pack
				if err := json.Unmarshal(tc.data, &decoded); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(*p, decoded) {
					t.Errorf("the returned pack is not the bytes decoded")
				}
			}
		})
	}
}
