package lang

import (
	"reflect"
	"sort"
	"testing"
)

// testResolver builds a resolver over files given with their contents.
func testResolver(files map[string]string) (*Resolver, func(string) *Facts) {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	r := NewResolver(paths, func(p string) string { return files[p] })
	facts := map[string]*Facts{}
	return r, func(p string) *Facts {
		if f, ok := facts[p]; ok {
			return f
		}
		f := Extract(p, files[p])
		facts[p] = f
		return f
	}
}

func unitKeys(us []Unit) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, u.Key)
	}
	return out
}

func TestResolveImports(t *testing.T) {
	r, facts := testResolver(map[string]string{
		"go.mod":                                  "module example.com/m\n",
		"main.go":                                 "package main\nimport (\n\t\"fmt\"\n\t\"example.com/m/internal/db\"\n\t\"example.com/m/pkg/none\"\n)\n",
		"internal/db/db.go":                       "package db\n",
		"internal/db/conn.go":                     "package db\n",
		"internal/db/db_test.go":                  "package db\n",
		"tools/go.mod":                            "module example.com/m/tools\n",
		"tools/gen/gen.go":                        "package gen\nimport \"example.com/m/tools/lib\"\n",
		"tools/lib/lib.go":                        "package lib\n",
		"web/src/app.ts":                          "import a from './util';\nimport b from '../lib/index.js';\nimport c from './comp';\nimport d from 'react';\nimport e from '../../../outside';\n",
		"web/src/util.ts":                         "export const x = 1;\n",
		"web/src/comp/index.tsx":                  "export default 1;\n",
		"web/lib/index.ts":                        "export {};\n",
		"py/app/__init__.py":                      "",
		"py/app/views.py":                         "from . import models\nfrom .util.text import slug\nfrom ..shared import conf\nimport app.models\n",
		"py/app/models.py":                        "",
		"py/app/util/text.py":                     "",
		"py/shared/__init__.py":                   "",
		"src/app/models.py":                       "",
		"py/top.py":                               "import app.models\n",
		"crate/Cargo.toml":                        "[package]\nname = \"c\"\n",
		"crate/src/main.rs":                       "mod net;\nuse crate::store::{db::Pool, Cache};\nuse std::io;\n",
		"crate/src/net.rs":                        "mod tcp;\nuse super::store::Cache;\n",
		"crate/src/net/tcp.rs":                    "",
		"crate/src/store/mod.rs":                  "",
		"crate/src/store/db.rs":                   "",
		"j/src/main/java/com/x/App.java":          "package com.x;\nimport com.x.model.User;\nimport com.x.util.*;\nimport static com.x.util.Strings.trim;\nimport java.util.List;\n",
		"j/src/main/java/com/x/model/User.java":   "package com.x.model;\n",
		"j/src/main/java/com/x/util/Strings.java": "package com.x.util;\n",
		"j/src/main/java/com/x/util/Dates.java":   "package com.x.util;\n",
	})
	cases := map[string][]string{
		"main.go":                        {"internal/db/"},
		"tools/gen/gen.go":               {"tools/lib/"},
		"web/src/app.ts":                 {"web/lib/index.ts", "web/src/comp/index.tsx", "web/src/util.ts"},
		"py/app/views.py":                {"py/app/models.py", "py/app/util/text.py", "py/shared/__init__.py", "src/app/models.py"},
		"py/top.py":                      {"src/app/models.py"},
		"crate/src/main.rs":              {"crate/src/net.rs", "crate/src/store/db.rs", "crate/src/store/mod.rs"},
		"crate/src/net.rs":               {"crate/src/net/tcp.rs", "crate/src/store/mod.rs"},
		"j/src/main/java/com/x/App.java": {"j/src/main/java/com/x/model/User.java", "j/src/main/java/com/x/util/Dates.java", "j/src/main/java/com/x/util/Strings.java"},
	}
	for from, want := range cases {
		got := unitKeys(r.Resolve(from, facts(from)))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s imports %q, want %q", from, got, want)
		}
	}
	// A Go package unit stands for its non-test files.
	us := r.Resolve("main.go", facts("main.go"))
	if want := []string{"internal/db/conn.go", "internal/db/db.go"}; !reflect.DeepEqual(us[0].Files, want) {
		t.Errorf("db unit files = %q", us[0].Files)
	}
}

func TestImportGraphAndRelated(t *testing.T) {
	files := map[string]string{
		"go.mod":          "module example.com/m\n",
		"lib/lib.go":      "package lib\n",
		"lib/lib_test.go": "package lib\nimport \"example.com/m/util\"\n",
		"util/util.go":    "package util\n",
		"a/a.go":          "package a\nimport (\"example.com/m/lib\"; \"example.com/m/util\")\n",
		"b/b.go":          "package b\nimport \"example.com/m/lib\"\n",
		"c/c.go":          "package c\nimport \"example.com/m/lib\"\n",
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	r, facts := testResolver(files)
	g := BuildGraph(r, paths, facts)
	if got := g.In["lib/"]; !reflect.DeepEqual(got, []string{"a/a.go", "b/b.go", "c/c.go"}) {
		t.Errorf("fan-in of lib/ = %q", got)
	}
	if got := g.In["util/"]; !reflect.DeepEqual(got, []string{"a/a.go"}) {
		t.Errorf("fan-in of util/ (tests do not count) = %q", got)
	}
	if g.Edges != 5 {
		t.Errorf("edges = %d", g.Edges)
	}
	rel := RelatedFiles([]string{"c/c.go", "a/a.go", "lib/lib.go"}, func(p string) []Unit { return r.Resolve(p, facts(p)) })
	if want := []string{"util/util.go"}; !reflect.DeepEqual(rel, want) {
		t.Errorf("related = %q, want %q (changed files are never related)", rel, want)
	}
	rel = RelatedFiles([]string{"b/b.go", "a/a.go"}, func(p string) []Unit { return r.Resolve(p, facts(p)) })
	if want := []string{"lib/lib.go", "util/util.go"}; !reflect.DeepEqual(rel, want) {
		t.Errorf("related = %q, want %q", rel, want)
	}
}
