package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fixtureFacts extracts one file of the summary fixture repository.
func fixtureFacts(t *testing.T, rel string) *Facts {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "summary_repo", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return Extract(rel, string(data))
}

func routeStrings(rs []Route) []string {
	out := []string{}
	for _, r := range rs {
		s := r.Method + " " + r.Path
		if r.Handler != "" {
			s += " → " + r.Handler
		}
		out = append(out, fmt.Sprintf("%s (%s, line %d)", s, r.Framework, r.Line))
	}
	return out
}

func signalStrings(ss []Signal) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%d %s: %s", s.Line, s.Kind, s.What))
	}
	return out
}

func funcStrings(fs []Func, min int) []string {
	out := []string{}
	for _, f := range fs {
		if f.Lines() >= min || f.Complexity > 1 || f.MaxNesting > 0 {
			out = append(out, fmt.Sprintf("%s %d-%d c%d n%d", f.Name, f.Line, f.EndLine, f.Complexity, f.MaxNesting))
		}
	}
	return out
}

func nz(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type factsWant struct {
	lang     string
	pkg      string
	doc      string
	main     int // MainLine, 0 = not a program
	imports  []string
	exports  []string
	topLevel bool
	routes   []string
	commands []string
	signals  []string
	funcs    []string // functions over 5 lines or with branches or loops
}

func checkFacts(t *testing.T, rel string, w factsWant) {
	t.Helper()
	f := fixtureFacts(t, rel)
	got := factsWant{
		lang: f.Lang, pkg: f.Package, doc: f.Doc, imports: nz(f.Imports), exports: nz(f.Exports), topLevel: f.TopLevel,
		routes: routeStrings(f.Routes), commands: nz(f.Commands), signals: signalStrings(f.Signals), funcs: funcStrings(f.Funcs, 6),
	}
	if f.Main {
		got.main = f.MainLine
	}
	w.imports, w.exports, w.routes, w.commands, w.signals, w.funcs = nz(w.imports), nz(w.exports), nz(w.routes), nz(w.commands), nz(w.signals), nz(w.funcs)
	if f.ParseNote != "" {
		t.Errorf("%s: parse note %q", rel, f.ParseNote)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"lang", got.lang, w.lang}, {"package", got.pkg, w.pkg}, {"doc", got.doc, w.doc}, {"main line", got.main, w.main},
		{"imports", got.imports, w.imports}, {"exports", got.exports, w.exports}, {"top level", got.topLevel, w.topLevel},
		{"routes", got.routes, w.routes}, {"commands", got.commands, w.commands}, {"signals", got.signals, w.signals},
		{"funcs", got.funcs, w.funcs},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %s\n got  %#v\n want %#v", rel, c.name, c.got, c.want)
		}
	}
}

func TestExtractGo(t *testing.T) {
	checkFacts(t, "cmd/shop/main.go", factsWant{
		lang: LangGo, pkg: "main", doc: "Command shop runs the shop server and its maintenance commands.", main: 13,
		imports:  []string{"fmt", "os", "example.com/shop/internal/server", "example.com/shop/internal/store", "github.com/spf13/cobra"},
		commands: []string{"shop: Run and maintain the shop", "serve: Start the HTTP server", "migrate: Apply database migrations"},
		funcs:    []string{"main 13-30 c2 n0"},
	})
	checkFacts(t, "internal/server/server.go", factsWant{
		lang: LangGo, pkg: "server", doc: "Package server wires the HTTP routes of the shop.",
		imports: []string{"encoding/json", "net/http", "example.com/shop/internal/store", "github.com/go-chi/chi/v5"},
		exports: []string{"func Run"},
		routes: []string{
			"GET /healthz → health (chi, line 15)",
			"GET /api/v1/products → listProducts (chi, line 17)",
			"POST /api/v1/products → createProduct (chi, line 18)",
			"GET /api/v1/orders/{id} → getOrder (chi, line 20)",
			"MOUNT /admin → adminRouter(…) (chi, line 23)",
			"GET /metrics → metrics (net/http, line 25)",
			"ANY / → r (net/http, line 26)",
			"ANY /debug/vars → metrics (net/http, line 27)",
		},
		funcs: []string{"Run 13-30 c1 n0", "listProducts 34-41 c2 n0"},
	})
	checkFacts(t, "internal/server/routes_gin.go", factsWant{
		lang: LangGo, pkg: "server",
		imports: []string{"example.com/shop/internal/store", "github.com/gin-gonic/gin"},
		exports: []string{"func Gin"},
		routes: []string{
			"GET /partner/v2/stock/:sku → func literal (gin, line 13)",
			"POST /partner/v2/orders → partnerOrder (gin, line 14)",
			"DELETE /cache → flush (gin, line 16)",
		},
		funcs: []string{"Gin 9-18 c1 n0"},
	})
	checkFacts(t, "internal/server/routes_echo.go", factsWant{
		lang: LangGo, pkg: "server",
		imports: []string{"example.com/shop/internal/store", "github.com/labstack/echo/v4"},
		exports: []string{"func Echo"},
		routes:  []string{"GET /reports/daily → daily (echo, line 12)", "PUT /settings → settings (echo, line 13)"},
		funcs:   []string{"Echo 9-16 c1 n0"},
	})
	checkFacts(t, "internal/server/routes_mux.go", factsWant{
		lang: LangGo, pkg: "server",
		imports: []string{"net/http", "example.com/shop/internal/store", "github.com/gorilla/mux"},
		exports: []string{"func Legacy"},
		routes: []string{
			"GET /v0/products → legacyProducts (gorilla/mux, line 13)",
			"HEAD /v0/products → legacyProducts (gorilla/mux, line 13)",
			"DELETE /v0/admin/users/{id} → legacyUser (gorilla/mux, line 15)",
		},
		funcs: []string{"Legacy 11-20 c1 n0"},
	})
	checkFacts(t, "internal/server/tls.go", factsWant{
		lang: LangGo, pkg: "server",
		imports: []string{"crypto/tls", "net/http", "example.com/shop/internal/store"},
		exports: []string{"var Client"},
		signals: []string{"12 security: disables TLS certificate verification (InsecureSkipVerify: true)"},
	})
	checkFacts(t, "internal/store/store.go", factsWant{
		lang: LangGo, pkg: "store", doc: "Package store keeps products and orders in SQL.",
		imports: []string{"context", "database/sql", "fmt", "os/exec", "regexp"},
		exports: []string{"var DB", "type Product", "const MaxPageSize", "func Products", "func Stock", "func Migrate", "func Reconcile", "func Validate", "func Report"},
		signals: []string{
			"26 security: builds SQL by string concatenation",
			"36 security: builds SQL with fmt.Sprintf",
			"43 security: runs a shell command (exec.Command \"sh\")",
			"51 performance: loops nested 3 deep",
			"61 performance: compiles a regular expression on every call of Validate (regexp.MustCompile)",
		},
		funcs: []string{"Products 25-32 c2 n0", "Reconcile 47-57 c4 n3", "Validate 60-68 c3 n1", "Report 71-281 c70 n0"},
	})
}

func TestExtractTypeScript(t *testing.T) {
	checkFacts(t, "web/src/server.ts", factsWant{
		lang: LangTypeScript, doc: "The web front door: serves pages and proxies the API.", topLevel: true,
		imports: []string{"express", "./util/format", "./routes/users", "node:path", "child_process"},
		routes: []string{
			"USE /api/users → usersRouter (express, line 21)",
			"GET / (express, line 23)",
			"POST /checkout (express, line 27)",
			"GET /files/:name (express, line 32)",
			"POST /admin/run (express, line 34)",
		},
		signals: []string{"35 security: runs a shell command (child_process.exec)"},
	})
	checkFacts(t, "web/src/routes/users.ts", factsWant{
		lang:    LangTypeScript,
		imports: []string{"express", "pg"},
		exports: []string{"default router"},
		routes: []string{
			"GET /:id (express, line 8)",
			"GET /:id/orders → listOrders (express, line 15)",
			"POST /:id/orders → createOrder (express, line 16)",
		},
		signals: []string{"9 security: builds SQL with template interpolation", "25 performance: loops nested 3 deep"},
		funcs:   []string{"createOrder 22-31 c4 n3"},
	})
	checkFacts(t, "web/src/util/format.ts", factsWant{
		lang: LangTypeScript, doc: "Money formatting helpers.",
		imports: []string{"./currency"},
		exports: []string{"interface Money", "type Currency", "const DEFAULT_CURRENCY", "const FALLBACK_LOCALE", "function formatPrice",
			"const slugify", "enum Rounding", "class PriceBook", "default", "* from ./currency"},
		funcs: []string{"formatPrice 12-15 c2 n0"},
	})
	checkFacts(t, "web/src/util/currency.ts", factsWant{lang: LangTypeScript, exports: []string{"const RATES"}})
}

func TestExtractPython(t *testing.T) {
	checkFacts(t, "api/app/main.py", factsWant{
		lang: LangPython, doc: "Pricing API: computes prices and discounts.", main: 26, topLevel: true,
		imports: []string{"fastapi", ".routers", ".", "uvicorn"},
		exports: []string{"const API_VERSION", "def health", "async def quote"},
		routes:  []string{"GET /health → health (fastapi, line 15)", "POST /quote → quote (fastapi, line 20)"},
	})
	checkFacts(t, "api/app/routers/items.py", factsWant{
		lang: LangPython, topLevel: true,
		imports: []string{"fastapi", "..db"},
		exports: []string{"def read_item", "def price"},
		routes: []string{
			"GET /items/{sku} → read_item (fastapi, line 10)",
			"GET /items/{sku}/price → price (fastapi, line 16)",
			"PUT /items/{sku}/price → price (fastapi, line 16)",
		},
		signals: []string{"12 security: builds SQL in an f-string"},
	})
	checkFacts(t, "api/app/db.py", factsWant{
		lang:    LangPython,
		imports: []string{"pickle", "subprocess", "yaml"},
		exports: []string{"session", "total", "load_config"},
		signals: []string{
			"13 security: builds SQL by string formatting",
			"19 security: deserializes YAML without SafeLoader (yaml.load)",
			"20 security: deserializes untrusted data (pickle.loads)",
			"21 security: runs a shell command (subprocess with shell=True)",
			"24 performance: loops nested 3 deep",
		},
		funcs: []string{"load_config 17-26 c4 n3"},
	})
	checkFacts(t, "api/flask_app.py", factsWant{
		lang: LangPython, main: 24, topLevel: true,
		imports: []string{"flask"},
		exports: []string{"def users", "def index", "class Settings"},
		routes:  []string{"GET /admin/users → users (flask, line 7)", "POST /admin/users → users (flask, line 7)", "GET / → index (flask, line 12)"},
		signals: []string{"26 security: runs the server in debug mode (debug=True)"},
	})
}

func TestExtractRust(t *testing.T) {
	checkFacts(t, "engine/src/main.rs", factsWant{
		lang: LangRust, doc: "The job engine: runs pricing jobs behind a small HTTP API.", main: 14,
		imports: []string{"mod jobs", "axum::routing::get", "axum::routing::post", "axum::Router", "crate::jobs::Job", "crate::jobs::JobQueue", "std::sync::Arc"},
		routes: []string{
			"GET /health → health (axum, line 17)",
			"POST /jobs → create_job (axum, line 18)",
			"GET /jobs → list_jobs (axum, line 18)",
			"MOUNT /admin (axum, line 19)",
		},
		funcs: []string{"main 14-23 c1 n0"},
	})
	checkFacts(t, "engine/src/jobs.rs", factsWant{
		lang:    LangRust,
		imports: []string{"std::collections::HashMap"},
		exports: []string{"struct Job", "struct JobQueue", "enum State", "const MAX_JOBS", "fn Job::new", "fn Job::query", "fn raw_bytes"},
		signals: []string{"31 security: builds SQL with format!", "38 security: unsafe block"},
	})
}

func TestExtractJava(t *testing.T) {
	dir := "billing/src/main/java/com/example/billing/"
	checkFacts(t, dir+"BillingApplication.java", factsWant{
		lang: LangJava, pkg: "com.example.billing", main: 9,
		imports: []string{"org.springframework.boot.SpringApplication", "org.springframework.boot.autoconfigure.SpringBootApplication"},
		exports: []string{"class BillingApplication", "method BillingApplication.main"},
	})
	checkFacts(t, dir+"BillingController.java", factsWant{
		lang: LangJava, pkg: "com.example.billing",
		imports: []string{"java.util.List", "java.sql.Statement", "org.springframework.web.bind.annotation.*", "org.springframework.http.HttpStatus.CREATED"},
		exports: []string{"class BillingController", "method BillingController.get", "method BillingController.create", "method BillingController.bulk"},
		routes: []string{
			"GET /api/billing/{id} → BillingController.get (spring, line 14)",
			"POST /api/billing → BillingController.create (spring, line 21)",
			"PUT /api/billing/bulk → BillingController.bulk (spring, line 27)",
			"PUT /api/billing/batch → BillingController.bulk (spring, line 27)",
		},
		signals: []string{"16 security: builds SQL by string concatenation", "33 security: runs an OS command (Runtime.exec)"},
	})
	checkFacts(t, dir+"Invoice.java", factsWant{
		lang: LangJava, pkg: "com.example.billing",
		imports: []string{"java.security.MessageDigest"},
		exports: []string{"class Invoice", "method Invoice.getId", "method Invoice.checksum"},
		signals: []string{"18 security: uses a weak hash (MessageDigest \"MD5\")"},
	})
}

func TestExtractOtherLanguagesDegrade(t *testing.T) {
	f := fixtureFacts(t, "scripts/deploy.sh")
	if f.Lang != "" || f.Lines != 5 || len(f.Exports)+len(f.Imports)+len(f.Routes) != 0 {
		t.Fatalf("shell facts = %+v", f)
	}
	got := FirstLines("#!/bin/sh\n\n{\n  x = 1\n}\n", 5, 10)
	want := []NumberedLine{{1, "#!/bin/sh"}, {4, "  x = 1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("firstLines = %+v", got)
	}
	// Broken and huge files never fail.
	if f := Extract("bad.go", "package x\nfunc ( {"); f.ParseNote == "" || f.Lang != LangGo {
		t.Fatalf("broken Go: %+v", f)
	}
	if f := Extract("big.js", strings.Repeat("x", extractMaxBytes+1)); f.Lang != "" || f.ParseNote == "" {
		t.Fatalf("huge file: %+v", f)
	}
	for _, p := range []string{"a.ts", "a.py", "a.rs", "a.java"} {
		Extract(p, "\"unterminated\n'x\n/* open comment\n`tmpl ${ {")
	}
}

// Tricky lexing: comments, strings, regular expressions, templates and
// multi-line imports must neither hide real code nor invent any.
func TestExtractLexingEdgeCases(t *testing.T) {
	js := `// import "comment-line"
/* import x from "comment-block"; app.get("/nope", h) */
import {
  a, // trailing comment
  b as c,
} from './multi';
const s = "import y from 'in-string'";
const t = ` + "`" + `template ${"with ${nested}"} and ` + "`" + `;
const re = /from "regex"/;
const d = 10 / 2 / 1; import('./lazy');
const jsx = <p>Don't stop</p>;
export { a as default, c };
`
	f := Extract("x.jsx", js)
	if want := []string{"./multi", "./lazy"}; !reflect.DeepEqual(f.Imports, want) {
		t.Errorf("js imports = %q, want %q", f.Imports, want)
	}
	if want := []string{"default", "c"}; !reflect.DeepEqual(f.Exports, want) {
		t.Errorf("js exports = %q, want %q", f.Exports, want)
	}
	py := `"""Module doc. import fake"""
import os, sys as system
from .pkg.mod import (
    one,
    two as deux,  # comment with import three
)
x = '''
from nowhere import nothing
'''
long = 1 + \
    2
def f(a,
      b):
    if a and b:
        return 1
    return 2
`
	f = Extract("m.py", py)
	if want := []string{"os", "sys", ".pkg.mod"}; !reflect.DeepEqual(f.Imports, want) {
		t.Errorf("py imports = %q, want %q", f.Imports, want)
	}
	if want := []string{"one", "two"}; !reflect.DeepEqual(f.refs[2].names, want) {
		t.Errorf("py names = %q", f.refs[2].names)
	}
	if want := []string{"def f"}; !reflect.DeepEqual(f.Exports, want) {
		t.Errorf("py exports = %q", f.Exports)
	}
	if len(f.Funcs) != 1 || f.Funcs[0].Line != 12 || f.Funcs[0].EndLine != 16 || f.Funcs[0].Complexity != 3 {
		t.Errorf("py funcs = %+v", f.Funcs)
	}
	rs := `/* outer /* nested */ still comment use fake::x; */
use std::{fmt, io::{self, Read}};
fn longest<'a>(x: &'a str, y: &'a str) -> &'a str { if x.len() > y.len() { x } else { y } }
const Q: char = '"';
static R: &str = r##"raw "# use nope::x; "##;
pub(crate) fn hidden() {}
`
	f = Extract("lib.rs", rs)
	if want := []string{"std::fmt", "std::io::self", "std::io::Read"}; !reflect.DeepEqual(f.Imports, want) {
		t.Errorf("rust imports = %q, want %q", f.Imports, want)
	}
	if len(f.Funcs) != 2 || f.Funcs[0].Name != "longest" || f.Funcs[0].Complexity != 2 {
		t.Errorf("rust funcs = %+v", f.Funcs)
	}
	if len(f.Exports) != 0 {
		t.Errorf("rust exports = %q", f.Exports)
	}
	java := `package a.b;
import java.util.*;
/** @GetMapping("/fake") */
public interface Repo {
    String Q = """
        SELECT * FROM t WHERE x = " + y
        """;
    public List<String> find(String q);
}
`
	f = Extract("Repo.java", java)
	if f.Package != "a.b" || !reflect.DeepEqual(f.Imports, []string{"java.util.*"}) || len(f.Routes) != 0 || len(f.Signals) != 0 {
		t.Errorf("java = %+v", f)
	}
	if want := []string{"interface Repo", "method Repo.find"}; !reflect.DeepEqual(f.Exports, want) {
		t.Errorf("java exports = %q", f.Exports)
	}
}

func TestFirstSentenceAndCaps(t *testing.T) {
	if got := firstSentence("Package x does   things. More text."); got != "Package x does things." {
		t.Fatal(got)
	}
	if got := capRunes("héllo wörld", 5); got != "héll…" {
		t.Fatal(got)
	}
	if got := leadingDoc("// Copyright 2024 Acme\n// Licensed under MIT\n"); got != "" {
		t.Fatalf("license header taken as doc: %q", got)
	}
}

// TestImportsMatchesExtract: Imports gives every Go file of this module
// the imports Extract gives it (FuzzExtract holds the two together on its
// seeds of every language and on any text).
func TestImportsMatchesExtract(t *testing.T) {
	eachModuleGoFile(t, func(p, text string) {
		want := Extract(p, text).Imports
		if got := Imports(p, text); !slices.Equal(got, want) {
			t.Errorf("%s: Imports %q, Extract %q", p, got, want)
		}
	})
}
