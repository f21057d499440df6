package lang

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The extractors parse file text a repository (and so a pull request)
// controls. Each fuzz target checks what every caller relies on: no panic,
// the same facts for the same text, and line numbers inside the file.

// checkFactsBounded fails when facts point outside the file or are out of order.
func checkFactsBounded(t *testing.T, p, text string, f *Facts) {
	t.Helper()
	if g := Extract(p, text); !reflect.DeepEqual(f, g) {
		t.Fatalf("Extract(%q) is not deterministic", p)
	}
	if f.Lines != CountLines(text) {
		t.Fatalf("Lines = %d, want %d", f.Lines, CountLines(text))
	}
	last := max(f.Lines, 1)
	inFile := func(what string, line, end int) {
		if line < 1 || line > last || end < line || end > last {
			t.Fatalf("%s spans lines %d..%d of a %d-line file", what, line, end, f.Lines)
		}
	}
	for _, s := range f.Symbols {
		inFile("symbol "+s.Name, s.Line, s.EndLine)
	}
	if !slices.IsSortedFunc(f.Symbols, func(a, b Symbol) int { return a.Line - b.Line }) {
		t.Fatal("symbols are not sorted by line")
	}
	for _, fn := range f.Funcs {
		inFile("func "+fn.Name, fn.Line, fn.EndLine)
		if fn.Complexity < 1 || fn.MaxNesting < 0 {
			t.Fatalf("func %s: complexity %d, nesting %d", fn.Name, fn.Complexity, fn.MaxNesting)
		}
	}
	for _, s := range f.Signals {
		inFile("signal "+s.What, s.Line, s.Line)
	}
	for _, r := range f.Routes {
		inFile("route "+r.String(), r.Line, r.Line)
	}
	if f.Main && f.MainLine != 0 {
		inFile("main", f.MainLine, f.MainLine)
	}
	if len(f.Imports) != len(Dedupe(slices.Clone(f.Imports))) {
		t.Fatalf("imports repeat: %q", f.Imports)
	}
	if got := Imports(p, text); !slices.Equal(got, f.Imports) {
		t.Fatalf("Imports(%q) = %q, Extract's %q", p, got, f.Imports)
	}
}

// extractPaths are the file names FuzzExtract's which picks: one per
// extractor (TypeScript shares the JavaScript one with its own syntax).
var extractPaths = []string{"cmd/x/main.go", "src/app.js", "src/app.ts", "pkg/mod.py", "src/main.rs", "src/main/java/a/B.java"}

// FuzzExtract runs each language extractor (which picks it) on file text a
// repository controls. One target for the six keeps CI's fuzzing time flat;
// the seeds hold each language's constructs.
func FuzzExtract(f *testing.F) {
	seeds := map[string][]string{
		"cmd/x/main.go": {
			"package main\n\nimport (\n\t\"fmt\"\n\tcli \"github.com/urfave/cli/v2\"\n)\n\n// Doc.\nfunc main() {\n\tfor i := 0; i < 3; i++ {\n\t\tif i > 1 && i < 2 {\n\t\t\tfmt.Println(i)\n\t\t}\n\t}\n}\n",
			"package api\n\nimport \"net/http\"\n\ntype S struct{}\n\nfunc (s *S) Get(w http.ResponseWriter, r *http.Request) {}\n\nfunc init() { http.HandleFunc(\"/x\", nil); db.Query(\"SELECT * FROM t WHERE id=\" + id) }\n",
			"package main\nimport \"github.com/spf13/cobra\"\nvar c = &cobra.Command{Use: \"run\", Short: \"runs\"}\nvar k = kingpin.Command(\"x\", \"y\")\n",
			"package p\nfunc (",
			"package p\n\nimport \"a\"\n\nvar x = 1\n\nimport \"b\"\n",
			"package p\nfunc f() { import \"x\" }\n",
			"package p\n// import \"c\"\nimport (\n\t_ \"a\"\n\t\"\"\n\t\"a\"\n)\nconst s = `import \"d\"`\n",
			"\xff\xfe package",
		},
		"src/app.js": {
			"=>{",
			"import a, {b as c} from './x';\nconst r = require(\"y\");\nexport default function f(a) { return `q ${a}` }\nexport const g = async (x) => { if (x && y) { for (;;) {} } };\n",
			"class A extends B {\n  m(x: number): string { return x ? 'a' : \"b\" }\n  static async *gen() {}\n}\napp.get('/users/:id', (req, res) => { db.query(`SELECT * FROM u WHERE id=${req.params.id}`) });\n",
			"@Controller('cats')\nexport class C { @Get(':id') find() {} }\nconst re = /a[/]b/g; x = a / b / c;\n",
			"const f: Handler<T> = (a) => {\n}\n`unterminated ${ {`\n'\n/*",
			"}}}=>{{{(((",
		},
		"pkg/mod.py": {
			"\"\"\"Module doc.\"\"\"\nfrom . import a\nfrom ..b.c import d, e as f\nimport os.path\n\n@app.route('/x', methods=['POST'])\ndef view():\n    cur.execute(\"SELECT * FROM t WHERE a=%s\" % x)\n\nclass K(Base):\n    async def m(self):\n        for a in b:\n            while c:\n                pass\n\nif __name__ == \"__main__\":\n    main()\n",
			"import click\n@click.command()\n@click.option('--n')\ndef cli(n):\n    pass\nparser.add_argument('x')\n",
			"def f(\n  '''\n\tx\n\\\n",
			"from . import (\n  a,\n  b,\n",
		},
		"src/main.rs": {
			"//! Crate doc.\nuse std::io::{self, Read};\nmod net;\npub struct S<'a> { x: &'a str }\nimpl<'a> S<'a> {\n    pub fn new() -> Self where T: Clone { loop { 'outer: for x in y { while z {} } } }\n}\nfn main() { let c = 'x'; let s = r#\"raw \"str\"#; let b = b'a'; }\n",
			"#[get(\"/x\")]\nasync fn h() -> impl Responder { sqlx::query(&format!(\"SELECT {}\", x)) }\n",
			"r##\"unterminated\n/* /* nested */\n'",
			"fn f() -> Result<(), E> { br\"x\"; c\"y\"; cr#\"z\"# }",
		},
		"src/main/java/a/B.java": {
			"package a;\n\nimport java.util.List;\nimport static org.x.Y.*;\n\n/** Doc. */\npublic class B {\n  @GetMapping(\"/x\")\n  public String get() throws IOException { for (;;) { if (a || b) {} } }\n  public static void main(String[] args) { stmt.executeQuery(\"SELECT * FROM t WHERE a=\" + a); }\n}\n",
			"String s = \"\"\"\ntext block\n\"\"\";\nchar c = '\\'';\n",
			"class X { void m( { \"\"\"",
		},
	}
	seeds["src/app.ts"] = seeds["src/app.js"]
	for i, p := range extractPaths {
		for _, s := range seeds[p] {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		p := extractPaths[int(which)%len(extractPaths)]
		checkFactsBounded(t, p, text, Extract(p, text))
	})
}

// FuzzResolve resolves the imports a file declares against the repository's
// files: import specifiers are repository text ("../../../etc/passwd",
// "..." in Python, "super::super" in Rust) and must resolve to files of the
// repository or to nothing.
func FuzzResolve(f *testing.F) {
	f.Add("web/src/app.ts", "import a from '../../../../x';\nimport b from './util';\n")
	f.Add("py/app/views.py", "from .... import x\nfrom .util.text import slug\nimport app.models\n")
	f.Add("crate/src/net.rs", "mod tcp;\nuse super::super::super::store::Cache;\nuse crate::{a::{b, c}};\n")
	f.Add("main.go", "package main\nimport \"example.com/m/../../internal/db\"\n")
	f.Add("src/a/B.java", "package a;\nimport a.b.*;\nimport ..C;\n")
	files := map[string]string{
		"go.mod":                "module example.com/m\n",
		"internal/db/db.go":     "package db\n",
		"web/src/util.ts":       "",
		"web/src/comp/index.ts": "",
		"py/app/__init__.py":    "",
		"py/app/models.py":      "",
		"py/app/util/text.py":   "",
		"crate/Cargo.toml":      "[package]\nname = \"c\"\n",
		"crate/src/main.rs":     "",
		"crate/src/store.rs":    "",
		"src/a/b/C.java":        "",
	}
	f.Fuzz(func(t *testing.T, from, text string) {
		paths := []string{from}
		for p := range files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		r := NewResolver(paths, func(p string) string { return files[p] })
		units := r.Resolve(from, Extract(from, text))
		for _, u := range units {
			for _, p := range u.Files {
				if _, ok := files[p]; !ok && p != from {
					t.Fatalf("import resolved to %q, not a file of the repository", p)
				}
			}
		}
		if !reflect.DeepEqual(units, r.Resolve(from, Extract(from, text))) {
			t.Fatal("Resolve is not deterministic")
		}
	})
}

// mfNames are the manifest files BuildManifest parses, in the order the
// fuzz input's first byte picks them.
var mfNames = []string{"go.mod", "package.json", "pyproject.toml", "Pipfile", "requirements.txt", "requirements-dev.txt", "Cargo.toml", "pom.xml"}

// FuzzManifest builds the manifest of a repository whose manifest file
// (picked by which) and README are the fuzz input: every parser of
// BuildManifest (go.mod, package.json, pyproject.toml, Pipfile,
// requirements, Cargo.toml, pom.xml, the README's purpose) sees repository
// bytes. Never a panic; a file that does not parse is a note; the result is
// deterministic and its dependencies name the file that declares them.
func FuzzManifest(f *testing.F) {
	seeds := map[string]string{
		"go.mod":               "module example.com/m/v2\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.0.0\n\tgithub.com/c/d v0.1.0 // indirect\n)\nreplace x => ../x\n",
		"package.json":         `{"name":"@s/app","description":"An app.","main":"lib/index.js","bin":{"app":"bin/app.js"},"scripts":{"test":"jest","build":"tsc"},"dependencies":{"react":"^18"},"devDependencies":{"jest":"29"},"peerDependencies":{"x":1},"workspaces":["packages/*"]}`,
		"pyproject.toml":       "[project]\nname = \"pkg\"\ndescription = \"Does.\"\ndependencies = [\"requests>=2; python_version>'3'\", \"click\"]\n[project.optional-dependencies]\ndev = [\"pytest\"]\n[project.scripts]\npkg = \"pkg.cli:main\"\n[tool.poetry.dependencies]\npython = \"^3.9\"\nflask = {version = \"2\"}\n[tool.pytest.ini_options]\n[build-system]\nrequires = [\"hatchling\"]\n",
		"Pipfile":              "[packages]\nrequests = \"*\"\n[dev-packages]\npytest = {version = \"*\"}\n",
		"requirements.txt":     "requests==2.31 # pinned\n-r other.txt\n-e git+https://x/y#egg=z\nflask[async]>=2; python_version > '3.8'\n",
		"requirements-dev.txt": "pytest\n--index-url https://x\n",
		"Cargo.toml":           "[package]\nname = \"c\"\ndescription = \"A crate.\"\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\ntokio = \"1\"\n[dev-dependencies]\nx = { path = \"../x\" }\n[[bin]]\nname = \"b\"\npath = \"src/bin/b.rs\"\n[workspace]\nmembers = [\"a\"]\n",
		"pom.xml":              "<?xml version=\"1.0\"?><project><artifactId>app</artifactId><description>An &amp; app.</description><dependencies><dependency><groupId>g</groupId><artifactId>a</artifactId><version>${v}</version><scope>test</scope></dependency></dependencies></project>",
	}
	readme := "# App\n\n[![badge](x)](y)\n\nApp does *things* with `code`. See [docs][d].\n\n[d]: https://x\n"
	for i, name := range mfNames {
		f.Add(uint8(i), []byte(seeds[name]), readme)
	}
	f.Add(uint8(0), []byte("module"), "Title\n=====\n\n.. image:: x\n\nA reStructuredText readme.\n")
	f.Add(uint8(1), []byte(`{"name":{"x":1},"dependencies":[1,2],"bin":"../../etc"}`), "```\nunterminated fence")
	f.Add(uint8(6), []byte("[package\nname = "), "\x00\xff")
	f.Add(uint8(7), []byte("<!DOCTYPE x [<!ENTITY a \"&a;\">]><project>&a;</project>"), "")
	f.Fuzz(func(t *testing.T, which uint8, data []byte, readme string) {
		name := mfNames[int(which)%len(mfNames)]
		files := map[string]string{
			name:          string(data),
			"sub/" + name: string(data),
			"README.md":   readme,
			"README.rst":  readme,
			"main.go":     "package main\nfunc main() {}\n",
			"src/main.rs": "fn main() {}\n",
			"pkg/cli.py":  "def main(): pass\n",
		}
		m1, n1 := mfBuild(t, files)
		m2, n2 := mfBuild(t, files)
		if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(n1, n2) {
			t.Fatal("BuildManifest is not deterministic")
		}
		for _, d := range m1.Dependencies {
			if _, ok := files[d.Source]; !ok || d.Name == "" {
				t.Fatalf("dependency %+v: no name, or a source that is not a manifest of the tree", d)
			}
		}
		for _, e := range m1.EntryPoints {
			if _, ok := files[e]; !ok && !strings.HasSuffix(e, "/") {
				t.Fatalf("entry point %q is not a file of the tree", e)
			}
		}
		// Every text comes from File.Text: when Text has no Q where Read
		// has, no text of the manifest has one.
		tr := newMFTree(files)
		for i := range tr.files {
			text := []byte(strings.ReplaceAll(files[tr.files[i].Path], "Q", "q"))
			tr.files[i].Text = func(context.Context) ([]byte, error) { return text, nil }
		}
		m, notes := BuildManifest(context.Background(), "repo", tr.files, mfAll, nil)
		texts := append([]string{m.ProjectName, m.ProjectType, m.PurposeGuess, m.StructureSummary, m.BuildSystem, m.TestFramework}, notes...)
		for _, d := range m.Dependencies {
			texts = append(texts, d.Name, d.Version, d.Type, d.Source)
		}
		for _, s := range append(texts, m.EntryPoints...) {
			if strings.Contains(s, "Q") {
				t.Fatalf("%q is not from File.Text", s)
			}
		}
	})
}
