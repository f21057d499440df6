package pack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pipeline"
)

// genRepo writes a multi-language repository of n files (Go, TypeScript,
// Python, Rust, Java, and some docs and configs) with in-repo imports,
// routes and a few risky lines, commits it, then commits a change to 20
// files. It returns the repository directory.
func genRepo(tb testing.TB, n int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "gen")
	g := gittest.Init(tb, dir)
	write := func(p, s string) {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("go.mod", "module example.com/gen\n\ngo 1.22\n")
	write("README.md", "# gen\n\nGen is a generated multi-language repository for benchmarks.\n")
	body := func(i, lines int, f string) string {
		var b strings.Builder
		for k := 0; k < lines; k++ {
			fmt.Fprintf(&b, f, i, k)
		}
		return b.String()
	}
	files := []string{}
	for i := 0; len(files) < n-2; i++ {
		var p, s string
		switch i % 16 {
		case 0, 1, 2, 3, 4:
			pkg := fmt.Sprintf("pkg%02d", i%40)
			p = fmt.Sprintf("internal/%s/f%05d.go", pkg, i)
			s = fmt.Sprintf("// Package %s is generated.\npackage %s\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n\n\t\"example.com/gen/internal/pkg%02d\"\n)\n\n// Handler%d serves a route.\nfunc Handler%d(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprintln(w, pkg%02d.Name)\n}\n\nfunc init() { http.HandleFunc(\"/r%d\", Handler%d) }\n\n// Compute%d adds things up.\nfunc Compute%d(xs []int) int {\n\tn := 0\n%s\treturn n\n}\n",
				pkg, pkg, (i+1)%40, i, i, (i+1)%40, i, i, i, i, body(i, 30, "\tif len(xs) > %d+%d {\n\t\tn++\n\t}\n"))
		case 5, 6, 7, 8:
			p = fmt.Sprintf("web/src/mod%02d/c%05d.ts", i%30, i)
			s = fmt.Sprintf("import { Router } from \"express\";\nimport { helper } from \"../mod%02d/c%05d\";\n\nconst router = Router();\nrouter.get(\"/c%d\", (req, res) => res.json(helper()));\n\nexport function helper%d(x: number): number {\n%s  return x;\n}\n\nexport default router;\n",
				(i+1)%30, i+1, i, i, body(i, 25, "  if (x > %d + %d) { x++; }\n"))
		case 9, 10, 11:
			p = fmt.Sprintf("py/app/m%02d/v%05d.py", i%25, i)
			s = fmt.Sprintf("\"\"\"View %d.\"\"\"\nfrom fastapi import APIRouter\nfrom ..m%02d import models\n\nrouter = APIRouter(prefix=\"/v%d\")\n\n\n@router.get(\"/items\")\ndef items(q: str):\n%s    return q\n",
				i, (i+1)%25, i, body(i, 25, "    if q == '%d-%d':\n        q = q.upper()\n"))
		case 12, 13:
			p = fmt.Sprintf("engine/src/m%02d/r%05d.rs", i%20, i)
			s = fmt.Sprintf("use crate::m%02d::shared;\nuse std::collections::HashMap;\n\npub struct Job%d { pub id: u64 }\n\nimpl Job%d {\n    pub fn run(&self, m: &HashMap<u64, u64>) -> u64 {\n%s        self.id\n    }\n}\n",
				(i+1)%20, i, i, body(i, 20, "        if m.len() > %d + %d { return 1; }\n"))
		case 14:
			p = fmt.Sprintf("billing/src/main/java/com/gen/p%02d/C%05d.java", i%15, i)
			s = fmt.Sprintf("package com.gen.p%02d;\n\nimport java.util.List;\nimport org.springframework.web.bind.annotation.*;\n\n@RestController\n@RequestMapping(\"/c%d\")\npublic class C%05d {\n    @GetMapping(\"/{id}\")\n    public String get(@PathVariable long id) {\n        String sql = \"SELECT * FROM t WHERE id = \" + id;\n%s        return sql;\n    }\n}\n",
				i%15, i, i, body(i, 20, "        if (id > %d + %d) { id--; }\n"))
		default:
			switch i % 3 {
			case 0:
				p, s = fmt.Sprintf("docs/d%05d.md", i), fmt.Sprintf("# Doc %d\n\n%s", i, body(i, 20, "Paragraph %d.%d of the generated documentation.\n"))
			case 1:
				p, s = fmt.Sprintf("deploy/c%05d.yaml", i), fmt.Sprintf("name: svc%d\n%s", i, body(i, 20, "key%d_%d: value\n"))
			default:
				p, s = fmt.Sprintf("scripts/s%05d.sh", i), fmt.Sprintf("#!/bin/sh\n%s", body(i, 20, "echo step %d %d\n"))
			}
		}
		write(p, s)
		files = append(files, p)
	}
	g.Commit("generated")
	for k := 0; k < 20; k++ {
		p := files[k*(len(files)/20)]
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			tb.Fatal(err)
		}
		write(p, string(data)+"\n// changed\n")
	}
	g.Commit("change 20 files")
	return dir
}

// BenchmarkSummaryPack packs a generated 5,000-file multi-language
// repository (its last commit, the whole tree) as a Summary pack.
func BenchmarkSummaryPack(b *testing.B) {
	dir := genRepo(b, 5000)
	ctx := context.Background()
	opts := pipeline.PackOptions{Dir: dir, Commit: "HEAD", Scope: "tree", Type: "summary"}
	out, err := pipeline.Pack(ctx, opts) // warm: gitleaks rules, tokenizer, scan cache
	if err != nil {
		b.Fatal(err)
	}
	p := out.Result.Pack
	b.Logf("%d files: %s pack (%s), %d bytes, %d chars, index condensed: %v, dropped %d",
		len(out.Snapshot.Files), p.Type, p.Metadata.SelectionReason, len(out.Result.JSON), utf8.RuneCount(out.Result.JSON),
		p.Metadata.IndexCondensed != "", p.Budget.DroppedItems)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := pipeline.Pack(ctx, opts); err != nil {
			b.Fatal(err)
		}
	}
}
