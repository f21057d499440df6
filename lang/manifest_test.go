package lang

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// mfTree builds snapshot files from path → content, sorted by path, each with
// a Read closure that counts its calls, which is their Text too (the test's
// contents hold no secret).
type mfTree struct {
	files []File
	mu    sync.Mutex
	reads map[string]int
}

func newMFTree(contents map[string]string) *mfTree {
	tr := &mfTree{reads: map[string]int{}}
	for _, p := range mfSortedKeys(contents) {
		data := contents[p]
		read := func(context.Context) ([]byte, error) {
			tr.mu.Lock()
			tr.reads[p]++
			tr.mu.Unlock()
			return []byte(data), nil
		}
		tr.files = append(tr.files, File{Path: p, Size: int64(len(data)), Regular: true, Read: read, Text: read})
	}
	return tr
}

func mfAll(string) bool { return true }

func mfBuild(t *testing.T, contents map[string]string) (Manifest, []string) {
	t.Helper()
	return BuildManifest(context.Background(), "repo", newMFTree(contents).files, mfAll, nil)
}

func TestManifestGoMod(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"go.mod": `module example.com/acme/tool/v2

go 1.22

require (
	github.com/spf13/cobra v1.8.0
	golang.org/x/sync v0.7.0
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
)

require gopkg.in/yaml.v3 v3.0.1

replace golang.org/x/sync => ../sync
`,
		"cmd/tool/main.go":      "// Command tool does things.\npackage main\n\nfunc main() {}\n",
		"cmd/other/other.go":    "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(0) }\n",
		"cmd/other/flags.go":    "package main\n",
		"cmd/lib/lib.go":        "package lib\n\nfunc main() {}\n",
		"internal/x/x.go":       "package x\n",
		"internal/x/x_test.go":  "package x\n",
		"tools/main.go":         "//go:build tools\n\npackage tools\n",
		"examples/demo/main.go": "package main\nfunc main() {}\n",
		"Makefile":              "all:\n\tgo build ./...\n",
	})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	wantDeps := []Dependency{
		{Name: "github.com/spf13/cobra", Version: "v1.8.0", Type: "runtime", Source: "go.mod"},
		{Name: "golang.org/x/sync", Version: "v0.7.0", Type: "runtime", Source: "go.mod"},
		{Name: "gopkg.in/yaml.v3", Version: "v3.0.1", Type: "runtime", Source: "go.mod"},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	if m.ProjectName != "tool" || m.ProjectType != "go" || m.BuildSystem != "go" || m.TestFramework != "go test" {
		t.Errorf("name/type/build/test = %q %q %q %q", m.ProjectName, m.ProjectType, m.BuildSystem, m.TestFramework)
	}
	wantEntries := []string{"cmd/other/other.go", "cmd/tool/main.go"}
	if !reflect.DeepEqual(m.EntryPoints, wantEntries) {
		t.Errorf("entry points = %q, want %q", m.EntryPoints, wantEntries)
	}
}

func TestManifestPackageJSON(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"package.json": `{
  "name": "@acme/web",
  "version": "1.0.0",
  "description": "Acme web front end.",
  "main": "lib/index.js",
  "bin": {"acme": "./bin/acme.js", "gone": "bin/missing.js"},
  "scripts": {"start": "node --enable-source-maps server.js", "test": "jest"},
  "dependencies": {"react": "^18.2.0", "lodash": "4.17.21", "private": "git+https://user:s3cr3t@git.example.com/p.git"},
  "devDependencies": {"jest": "^29.7.0", "typescript": "~5.4.0"},
  "peerDependencies": {"react-dom": ">=18"},
  "optionalDependencies": {"fsevents": "^2.3.0"}
}`,
		"yarn.lock":       "# yarn lockfile v1\n",
		"lib/index.js":    "module.exports = {}\n",
		"bin/acme.js":     "#!/usr/bin/env node\n",
		"server.js":       "require('http')\n",
		"src/app.test.js": "test('x', () => {})\n",
	})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	wantDeps := []Dependency{
		{Name: "fsevents", Version: "^2.3.0", Type: "runtime", Source: "package.json"},
		{Name: "lodash", Version: "4.17.21", Type: "runtime", Source: "package.json"},
		{Name: "private", Version: "git+https://git.example.com/p.git", Type: "runtime", Source: "package.json"},
		{Name: "react", Version: "^18.2.0", Type: "runtime", Source: "package.json"},
		{Name: "jest", Version: "^29.7.0", Type: "dev", Source: "package.json"},
		{Name: "typescript", Version: "~5.4.0", Type: "dev", Source: "package.json"},
		{Name: "react-dom", Version: ">=18", Type: "peer", Source: "package.json"},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	want := Manifest{
		ProjectName:   "@acme/web",
		ProjectType:   "node",
		PurposeGuess:  "Acme web front end.",
		Dependencies:  wantDeps,
		EntryPoints:   []string{"bin/acme.js", "lib/index.js", "server.js"},
		BuildSystem:   "yarn",
		TestFramework: "jest",
	}
	m.StructureSummary = ""
	if !reflect.DeepEqual(m, want) {
		t.Errorf("manifest = %#v\nwant %#v", m, want)
	}
}

func TestManifestPyprojectPEP621(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"pyproject.toml": `[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "acme-tools"
description = "Tools for Acme."
dependencies = [
  "requests[socks]>=2.31,<3",
  "click (>=8.0)",
  "tomli>=1.1.0; python_version < '3.11'",
  "pkg @ https://example.com/pkg-1.0.tar.gz",
]

[project.optional-dependencies]
dev = ["ruff==0.4.4", "mypy"]
test = ["pytest>=7", "pytest-cov"]
postgres = ["psycopg[binary]~=3.1"]

[project.scripts]
acme = "acme_tools.cli:main"
`,
		"src/acme_tools/__init__.py": "",
		"src/acme_tools/cli.py":      "def main(): pass\n",
	})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	src := "pyproject.toml"
	wantDeps := []Dependency{
		{Name: "click", Version: ">=8.0", Type: "runtime", Source: src},
		{Name: "pkg", Type: "runtime", Source: src},
		{Name: "psycopg", Version: "~=3.1", Type: "runtime", Source: src},
		{Name: "requests", Version: ">=2.31,<3", Type: "runtime", Source: src},
		{Name: "tomli", Version: ">=1.1.0", Type: "runtime", Source: src},
		{Name: "mypy", Type: "dev", Source: src},
		{Name: "pytest", Version: ">=7", Type: "dev", Source: src},
		{Name: "pytest-cov", Type: "dev", Source: src},
		{Name: "ruff", Version: "==0.4.4", Type: "dev", Source: src},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	if m.ProjectName != "acme-tools" || m.ProjectType != "python" || m.BuildSystem != "hatch" || m.TestFramework != "pytest" {
		t.Errorf("name/type/build/test = %q %q %q %q", m.ProjectName, m.ProjectType, m.BuildSystem, m.TestFramework)
	}
	if !reflect.DeepEqual(m.EntryPoints, []string{"src/acme_tools/cli.py"}) {
		t.Errorf("entry points = %q", m.EntryPoints)
	}
	if m.PurposeGuess != "Tools for Acme." {
		t.Errorf("purpose = %q", m.PurposeGuess)
	}
}

func TestManifestPoetry(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"pyproject.toml": `[tool.poetry]
name = "shop"
version = "0.1.0"
description = "A shop."

[tool.poetry.dependencies]
python = "^3.11"
fastapi = "^0.110.0"
sqlalchemy = { version = "^2.0", extras = ["asyncio"] }
internal-lib = { path = "../lib", develop = true }
numpy = [
  { version = "<1.25", python = "<3.9" },
  { version = "^1.25", python = ">=3.9" },
]

[tool.poetry.group.dev.dependencies]
pytest = "^8.0"
black = "*"

[tool.poetry.group.docs.dependencies]
mkdocs = "^1.5"

[tool.poetry.scripts]
shop = "shop.main:run"

[build-system]
requires = ["poetry-core"]
build-backend = "poetry.core.masonry.api"
`,
		"poetry.lock":  "",
		"shop/main.py": "def run(): pass\n",
		"manage.py":    "",
	})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	src := "pyproject.toml"
	wantDeps := []Dependency{
		{Name: "fastapi", Version: "^0.110.0", Type: "runtime", Source: src},
		{Name: "internal-lib", Type: "runtime", Source: src},
		{Name: "numpy", Version: "<1.25 || ^1.25", Type: "runtime", Source: src},
		{Name: "sqlalchemy", Version: "^2.0", Type: "runtime", Source: src},
		{Name: "black", Version: "*", Type: "dev", Source: src},
		{Name: "mkdocs", Version: "^1.5", Type: "dev", Source: src},
		{Name: "pytest", Version: "^8.0", Type: "dev", Source: src},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	if m.ProjectName != "shop" || m.BuildSystem != "poetry" || m.TestFramework != "pytest" || m.PurposeGuess != "A shop." {
		t.Errorf("name/build/test/purpose = %q %q %q %q", m.ProjectName, m.BuildSystem, m.TestFramework, m.PurposeGuess)
	}
	if !reflect.DeepEqual(m.EntryPoints, []string{"manage.py", "shop/main.py"}) {
		t.Errorf("entry points = %q", m.EntryPoints)
	}
}

func TestManifestRequirements(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"requirements.txt": `# runtime
-r base.txt
--index-url https://user:pw@pypi.example.com/simple
Django>=4.2,<5.0  # LTS
requests[security] == 2.31.0 ; python_version >= "3.8"
gunicorn
-e git+https://github.com/acme/lib.git#egg=lib
./vendor/local-pkg
https://example.com/archive.zip
numpy==1.26.4 \
    --hash=sha256:0123456789abcdef
!!! not a requirement
`,
		"requirements-dev.txt": "pytest==8.1.1\nblack\n",
		"app.py":               "",
	})
	wantNotes := []string{"requirements.txt: 1 line not understood (first at line 12), skipped"}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("notes = %q, want %q", notes, wantNotes)
	}
	wantDeps := []Dependency{
		{Name: "black", Type: "dev", Source: "requirements-dev.txt"},
		{Name: "pytest", Version: "==8.1.1", Type: "dev", Source: "requirements-dev.txt"},
		{Name: "Django", Version: ">=4.2,<5.0", Type: "runtime", Source: "requirements.txt"},
		{Name: "gunicorn", Type: "runtime", Source: "requirements.txt"},
		{Name: "numpy", Version: "==1.26.4", Type: "runtime", Source: "requirements.txt"},
		{Name: "requests", Version: "==2.31.0", Type: "runtime", Source: "requirements.txt"},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	if m.ProjectName != "repo" || m.ProjectType != "python" || m.BuildSystem != "pip" || m.TestFramework != "pytest" {
		t.Errorf("name/type/build/test = %q %q %q %q", m.ProjectName, m.ProjectType, m.BuildSystem, m.TestFramework)
	}
	if !reflect.DeepEqual(m.EntryPoints, []string{"app.py"}) {
		t.Errorf("entry points = %q", m.EntryPoints)
	}
}

func TestManifestCargo(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"Cargo.toml": `[package]
name = "ripper"
version = "0.3.0"
description = "Rips things, fast."

[dependencies]
serde = { version = "1.0", features = ["derive"] }
anyhow = "1"
local = { path = "../local" }

[dev-dependencies]
criterion = "0.5"

[build-dependencies]
cc = "1.0"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[[bin]]
name = "ripctl"
path = "src/bin/ctl.rs"
`,
		"src/main.rs":    "fn main() {}\n",
		"src/bin/ctl.rs": "fn main() {}\n",
		"src/lib.rs":     "",
	})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	src := "Cargo.toml"
	wantDeps := []Dependency{
		{Name: "anyhow", Version: "1", Type: "runtime", Source: src},
		{Name: "libc", Version: "0.2", Type: "runtime", Source: src},
		{Name: "local", Type: "runtime", Source: src},
		{Name: "serde", Version: "1.0", Type: "runtime", Source: src},
		{Name: "cc", Version: "1.0", Type: "dev", Source: src},
		{Name: "criterion", Version: "0.5", Type: "dev", Source: src},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	if m.ProjectName != "ripper" || m.ProjectType != "rust" || m.BuildSystem != "cargo" || m.TestFramework != "cargo test" || m.PurposeGuess != "Rips things, fast." {
		t.Errorf("manifest = %#v", m)
	}
	if !reflect.DeepEqual(m.EntryPoints, []string{"src/bin/ctl.rs", "src/main.rs"}) {
		t.Errorf("entry points = %q", m.EntryPoints)
	}
}

func TestManifestPom(t *testing.T) {
	m, notes := mfBuild(t, map[string]string{
		"pom.xml": `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>billing</artifactId>
  <description>Billing
    service.</description>
  <dependencies>
    <dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId><version>3.2.5</version></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
  <dependencyManagement><dependencies><dependency><groupId>x</groupId><artifactId>managed</artifactId></dependency></dependencies></dependencyManagement>
</project>`,
		"src/main/java/com/acme/App.java": "",
	})
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	wantDeps := []Dependency{
		{Name: "org.springframework.boot:spring-boot-starter-web", Version: "3.2.5", Type: "runtime", Source: "pom.xml"},
		{Name: "org.junit.jupiter:junit-jupiter", Version: "5.10.2", Type: "dev", Source: "pom.xml"},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	if m.ProjectName != "billing" || m.ProjectType != "java" || m.BuildSystem != "maven" || m.TestFramework != "junit" || m.PurposeGuess != "Billing service." {
		t.Errorf("manifest = %#v", m)
	}
}

func TestManifestMalformed(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantNote string // prefix
	}{
		{"package.json", map[string]string{"package.json": `{"name": "x", "dependencies": {`}, "package.json: not valid JSON: "},
		{"package.json array", map[string]string{"package.json": `["x"]`}, "package.json: not a JSON object"},
		{"package.json deps array", map[string]string{"package.json": `{"dependencies": ["a"]}`}, "package.json: dependencies is not an object"},
		{"pyproject", map[string]string{"pyproject.toml": "[project\nname = 'x'\n"}, "pyproject.toml: not valid TOML: "},
		{"pyproject bad requirement", map[string]string{"pyproject.toml": "[project]\ndependencies = ['ok', '???']\n"}, "pyproject.toml: 1 dependency entry not understood, skipped"},
		{"Cargo", map[string]string{"Cargo.toml": "[package]\nname = \n"}, "Cargo.toml: not valid TOML: "},
		{"go.mod", map[string]string{"go.mod": "module example.com/x\nrequire (\n  example.com/y\n"}, "go.mod: not a valid go.mod: "},
		{"pom", map[string]string{"pom.xml": "<project><artifactId>x</artifactId>"}, "pom.xml: not valid XML: "},
		{"Pipfile", map[string]string{"Pipfile": "[packages\n"}, "Pipfile: not valid TOML: "},
		{"requirements binary", map[string]string{"requirements.txt": "\x00\x01\x02"}, "requirements.txt: not a text file"},
		{"sub package.json", map[string]string{"web/package.json": "{oops}", "package.json": `{"name":"root","dependencies":{"a":"1"}}`}, "web/package.json: not valid JSON: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, notes := mfBuild(t, tt.files)
			if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, tt.wantNote) }) {
				t.Errorf("notes = %q, want one starting %q", notes, tt.wantNote)
			}
			for _, d := range m.Dependencies {
				if d.Source != "package.json" && d.Source != "pyproject.toml" {
					t.Errorf("dependency from a malformed file: %#v", d)
				}
			}
			if m.ProjectName == "" || m.Dependencies == nil || m.EntryPoints == nil {
				t.Errorf("incomplete manifest: %#v", m)
			}
		})
	}
}

func TestManifestExcludedNeverRead(t *testing.T) {
	tr := newMFTree(map[string]string{
		"package.json":  `{"name": "secret-name", "dependencies": {"a": "1"}}`,
		".env":          "API_KEY=abc\n",
		"README.md":     "Secret readme.\n",
		"main.go":       "package main\nfunc main() {}\n",
		"cmd/x/x.go":    "package main\nfunc main() {}\n",
		"src/index.js":  "",
		"go.mod":        "module example.com/ok\n",
		"conftest.py":   "",
		"credentials.x": "",
	})
	allowed := map[string]bool{"go.mod": true, "src/index.js": true}
	for _, inc := range []func(string) bool{func(p string) bool { return allowed[p] }, nil} {
		clear(tr.reads)
		m, notes := BuildManifest(context.Background(), "repo", tr.files, inc, nil)
		for p, n := range tr.reads {
			if inc == nil || !allowed[p] {
				t.Errorf("%s read %d times although not included", p, n)
			}
		}
		if inc != nil {
			if m.ProjectName != "ok" || len(m.Dependencies) != 0 || m.PurposeGuess != "" {
				t.Errorf("manifest = %#v", m)
			}
			// main.go is an entry point by its name; cmd/x/x.go would need reading.
			if !reflect.DeepEqual(m.EntryPoints, []string{"main.go", "src/index.js"}) {
				t.Errorf("entry points = %q", m.EntryPoints)
			}
			want := []string{"README.md: excluded, not read", "package.json: excluded, not read"}
			if !reflect.DeepEqual(notes, want) {
				t.Errorf("notes = %q, want %q", notes, want)
			}
		}
	}
}

// mfFakeSecret stands for a secret in the manifest tests: what a scanner
// of the File.Text of a tree would replace.
var mfFakeSecret = regexp.MustCompile(`FAKESECRET[0-9A-Z]{12}`)

// mfRedacted is contents with every fake secret replaced, as File.Text
// returns it.
func mfRedacted(s string) string { return mfFakeSecret.ReplaceAllString(s, "[REDACTED:fake]") }

// Every text the manifest takes from a manifest file or a README comes from
// File.Text, never from File.Read (which only tells Go entry points): the
// purpose cut from a README, descriptions, names and versions of every
// source hold nothing Read had and Text had not.
func TestManifestTextsComeFromText(t *testing.T) {
	const secret = "FAKESECRET0123456789AB"
	contents := map[string]string{
		"README.md":            "# p\n\nDeploys with the deploy key " + secret + " and a long sentence of words.\n",
		"package.json":         `{"name": "app` + secret + `", "description": "Ships ` + secret + `", "dependencies": {"left": "git+https://x/` + secret + `.git"}}`,
		"pyproject.toml":       "[project]\nname = \"py" + secret + "\"\ndescription = \"Py " + secret + "\"\ndependencies = [\"req==" + secret + "\"]\n",
		"Cargo.toml":           "[package]\nname = \"c" + secret + "\"\ndescription = \"Crate " + secret + "\"\n[dependencies]\nserde = \"" + secret + "\"\n",
		"pom.xml":              "<project><artifactId>j" + secret + "</artifactId><description>Jar " + secret + "</description><dependencies><dependency><groupId>g</groupId><artifactId>a</artifactId><version>" + secret + "</version></dependency></dependencies></project>",
		"go.mod":               "module example.com/g" + secret + "\n\nrequire example.com/dep v1.0.0-" + secret + "\n",
		"requirements.txt":     "flask==" + secret + "\n",
		"requirements-dev.txt": "pytest==" + secret + "\n",
		"Pipfile":              "[packages]\nrequests = \"==" + secret + "\"\n",
		"cmd/x/x.go":           "package main\n\nfunc main() {}\n",
	}
	for _, without := range []string{"", "README.md", "package.json"} {
		tr := newMFTree(contents)
		for i := range tr.files {
			f := &tr.files[i]
			redacted := []byte(mfRedacted(contents[f.Path]))
			f.Text = func(context.Context) ([]byte, error) { return redacted, nil }
			if f.Path == without {
				f.Text = nil // gives no text at all
			}
			if f.Path == "cmd/x/x.go" {
				f.Text = func(context.Context) ([]byte, error) { return nil, errors.New("a Go file is only classified") }
			}
		}
		m, notes := BuildManifest(context.Background(), "repo", tr.files, mfAll, nil)
		var all strings.Builder
		fmt.Fprintf(&all, "%#v %q", m, notes)
		if strings.Contains(all.String(), "FAKESECRET") {
			t.Errorf("without Text for %q: the manifest holds what only Read had: %s", without, all.String())
		}
		if !slices.Contains(m.EntryPoints, "cmd/x/x.go") {
			t.Errorf("without Text for %q: entry points %q: a Go file is classified by Read", without, m.EntryPoints)
		}
		if want := "Deploys with the deploy key [REDACTED:fake] and a long sentence of words."; without != "README.md" && m.PurposeGuess != want {
			t.Errorf("without Text for %q: purpose %q, want %q", without, m.PurposeGuess, want)
		}
	}

	// A file whose text may not be used (its scan excluded it) is noted so.
	tr := newMFTree(map[string]string{"README.md": "# p\n\nA readme of a few words.\n", "go.mod": "module example.com/m\n"})
	for i := range tr.files {
		if tr.files[i].Path == "README.md" {
			tr.files[i].Text = func(context.Context) ([]byte, error) { return nil, ErrExcluded }
		}
	}
	m, notes := BuildManifest(context.Background(), "repo", tr.files, mfAll, nil)
	if m.PurposeGuess != "" || !reflect.DeepEqual(notes, []string{"README.md: excluded, not read"}) {
		t.Errorf("purpose %q, notes %q", m.PurposeGuess, notes)
	}
}

// A text the manifest caps (the purpose, a version) is handed to the
// redactor whole before the cap, when it is over the cap only: a secret
// only the derived text holds (a JSON escape decoded) is replaced, not cut
// to a prefix no scan would recognise. A text it cannot check is left out.
func TestManifestRedactsBeforeItCaps(t *testing.T) {
	secret := "FAKESECRET0123456789AB"
	escaped := `FAKE\u0053ECRET0123456789AB` // the file's bytes hold no secret
	long := "dd " + strings.Repeat("e", 280)
	contents := map[string]string{
		"package.json": `{"name": "app", "description": "` + long + escaped + `", "dependencies": {"left": "git+https://x.io/` + strings.Repeat("v", 85) + escaped + `.git", "short": "1.0.0"}}`,
	}
	var handed []string
	redact := func(_ context.Context, s string) (string, error) {
		handed = append(handed, s)
		return mfRedacted(s), nil
	}
	m, notes := BuildManifest(context.Background(), "repo", newMFTree(contents).files, mfAll, redact)
	slices.Sort(handed)
	if len(handed) != 2 || !strings.HasSuffix(handed[0], secret) || !strings.Contains(handed[1], secret) {
		t.Errorf("handed to the redactor: %q; want the whole description and the long version", handed)
	}
	var all strings.Builder
	fmt.Fprintf(&all, "%#v %q", m, notes)
	if strings.Contains(all.String(), "FAKESECRET"[:6]) {
		t.Errorf("the manifest holds a part of the secret: %s", all.String())
	}
	if utf8.RuneCountInString(m.PurposeGuess) > mfMaxPurpose || !strings.HasPrefix(m.PurposeGuess, long[:250]) {
		t.Errorf("purpose %q", m.PurposeGuess)
	}

	// Capped without a redactor, the prefix is there: the case above is one.
	m, _ = BuildManifest(context.Background(), "repo", newMFTree(contents).files, mfAll, nil)
	if !strings.Contains(m.PurposeGuess, "FAKESECRET"[:6]) {
		t.Fatalf("purpose %q: the fixture does not cut the secret", m.PurposeGuess)
	}

	failing := func(context.Context, string) (string, error) { return "", errors.New("scanner down") }
	m, notes = BuildManifest(context.Background(), "repo", newMFTree(contents).files, mfAll, failing)
	if m.PurposeGuess != "" || !slices.Contains(notes, "manifest: a text could not be checked for secrets and is left out") {
		t.Errorf("a text the redactor could not check: purpose %q, notes %q", m.PurposeGuess, notes)
	}
	for _, d := range m.Dependencies {
		if d.Name == "left" && d.Version != "" || d.Name == "short" && d.Version != "1.0.0" {
			t.Errorf("dependency %+v", d)
		}
	}
}

func TestManifestCancelStopsReading(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := newMFTree(map[string]string{
		"package.json": `{"name": "late"}`,
		"README.md":    "Hello.\n",
	})
	cancelling := func(ctx context.Context) ([]byte, error) {
		cancel()
		return nil, ctx.Err()
	}
	tr.files = append(tr.files, File{Path: "go.mod", Regular: true, Read: cancelling, Text: cancelling})
	m, notes := BuildManifest(ctx, "repo", tr.files, mfAll, nil)
	if len(tr.reads) != 0 {
		t.Errorf("reads after cancellation: %v", tr.reads)
	}
	if m.ProjectName != "repo" || m.ProjectType != ProjectMixed {
		t.Errorf("manifest = %#v", m)
	}
	if !reflect.DeepEqual(notes, []string{"manifest: stopped reading files: context canceled"}) {
		t.Errorf("notes = %q", notes)
	}

	// A read error that is not the context's is a note, and reading goes on.
	tr = newMFTree(map[string]string{"README.md": "Hello.\n"})
	missing := func(context.Context) ([]byte, error) { return nil, errors.New("object missing") }
	tr.files = append(tr.files, File{Path: "go.mod", Regular: true, Read: missing, Text: missing})
	m, notes = BuildManifest(context.Background(), "repo", tr.files, mfAll, nil)
	if m.PurposeGuess != "Hello." || !reflect.DeepEqual(notes, []string{"go.mod: cannot read: object missing"}) {
		t.Errorf("purpose %q notes %q", m.PurposeGuess, notes)
	}
}

func TestManifestReadmeParagraph(t *testing.T) {
	tests := []struct {
		name, text string
		rst        bool
		want       string
	}{
		{"plain", "# Tool\n\nTool packs **trees** into _context_ packs.\nIt is fast.\n\n## Install\n", false,
			"Tool packs trees into context packs. It is fast."},
		{"badges and html", `<p align="center">
  <img src="logo.png" alt="logo" width="200">
</p>
<h1 align="center">Widget</h1>

[![CI](https://github.com/a/b/actions/workflows/ci.yml/badge.svg)](https://github.com/a/b/actions) [![Go Reference](https://pkg.go.dev/badge/x.svg)](https://pkg.go.dev/x)
![coverage](cov.svg)

<!-- a comment
spanning lines -->
Widget is a [small library](https://example.com/docs) for ` + "`widgets`" + ` &amp; gadgets.
`, false, "Widget is a small library for widgets & gadgets."},
		{"code fence first", "Title\n=====\n\n```sh\nnpm install thing\n```\n\n    indented code\n\nThe *real* description, see [docs][1].\n\n[1]: https://x\n", false,
			"The real description, see docs."},
		{"lists and toc skipped", "# T\n\n- [Install](#install)\n- [Usage](#usage)\n\n> A blockquoted tagline.\n", false, "A blockquoted tagline."},
		{"front matter", "---\ntitle: x\n---\n\nBody text.\n", false, "Body text."},
		{"nav line", "[Docs](d) | [Blog](b)\n\nReal text.\n", false, "Real text."},
		{"snake_case kept", "Use my_var_name and 2*3*4 here.\n", false, "Use my_var_name and 2*3*4 here."},
		{"tilde fence", "~~~\ncode\n~~~\nAfter fence.\n", false, "After fence."},
		{"heading right after text", "Intro line\n# Heading\nmore\n", false, "Intro line"},
		{"nothing", "# Only a heading\n\n```\ncode\n```\n", false, ""},
		// Issue 12: release announcements, pointers, HTML blocks, sections.
		{"announcement section until thematic break", "# Gin Web Framework\n\n[![CI](b.svg)](ci)\n\n## 📰 Gin 1.12.0 is now available!\n\nWe're excited to announce the release of **[Gin 1.12.0](https://x)**! Check out the [release announcement](https://x) for the full details.\n\n---\n\nGin is a high-performance HTTP web framework written in [Go](https://go.dev/).\n", false,
			"Gin is a high-performance HTTP web framework written in Go."},
		{"we are excited without heading", "We are thrilled to ship version 3 today, with many fixes.\n\nRouter is a tiny HTTP router for Go services.\n", false,
			"Router is a tiny HTTP router for Go services."},
		{"news prefix", "**NEWS:** the project moved to a new organisation last week.\n\nThe library parses TOML documents quickly.\n", false,
			"The library parses TOML documents quickly."},
		{"announcing", "Announcing Widget 2.0, our biggest release yet!\n\nWidget renders charts in the terminal.\n", false,
			"Widget renders charts in the terminal."},
		{"version is out", "🎉 v4.2 is out! Read the changelog.\n\nA fast JSON logger for Rust programs.\n", false,
			"A fast JSON logger for Rust programs."},
		{"this release", "This release brings new features and many important bug fixes.\n\nTool packs trees into context packs.\n", false,
			"Tool packs trees into context packs."},
		{"html heading, visit line, badge div", `<h1 align="center" style="border-bottom: none">
    <a href="https://prometheus.io" target="_blank"><img alt="Prometheus" src="/logo.svg"></a><br>Prometheus
</h1>

<p align="center">Visit <a href="https://prometheus.io" target="_blank">prometheus.io</a> for the full documentation,
examples and guides.</p>

<div align="center">

[![CI](https://x/badge.svg)](https://x)
[![Docker Pulls](https://img.shields.io/docker/pulls/prom/prometheus.svg)][hub]

</div>

Prometheus, a [Cloud Native Computing Foundation](https://cncf.io/) project, is a systems and service monitoring system.
`, false, "Prometheus, a Cloud Native Computing Foundation project, is a systems and service monitoring system."},
		{"visit line in markdown", "Visit https://x.io for the full documentation, examples and guides.\n\nX stores metrics in a time series database.\n", false,
			"X stores metrics in a time series database."},
		{"see the docs", "Please see the [documentation](https://x) for details.\n\nThe package signs release artifacts.\n", false,
			"The package signs release artifacts."},
		{"labelled url", "**Documentation**: [https://x.io](https://x.io)\n\n**Source Code**: [https://github.com/a/b](https://github.com/a/b)\n\nFastAPI is a modern web framework for building APIs.\n", false,
			"FastAPI is a modern web framework for building APIs."},
		{"skipped sections", "# X\n\n## Installation\n\nRun the installer with pip to get it going.\n\n### From source\n\nClone the repository and build it yourself.\n\n## About\n\nX turns logs into metrics for dashboards.\n", false,
			"X turns logs into metrics for dashboards."},
		{"setext sections", "Table of Contents\n-----------------\n\nThis section lists every part of the document.\n\nOverview\n--------\n\nFoo converts bar into baz for everyone.\n", false,
			"Foo converts bar into baz for everyone."},
		{"toc label and list", "**Table of Contents**\n\n- [Install](#install)\n- [Usage](#usage)\n\nThe real description of the tool is here.\n", false,
			"The real description of the tool is here."},
		{"shortcut references", "Flask is a lightweight [WSGI] framework built on [Werkzeug][] and [not a ref].\n\n[WSGI]: https://wsgi.readthedocs.io/\n[werkzeug]: https://werkzeug.palletsprojects.com/\n", false,
			"Flask is a lightweight WSGI framework built on Werkzeug and [not a ref]."},
		{"language switcher", "English | [简体中文](README.zh.md) | [日本語](README.ja.md)\n\nThe tool does many things rather well.\n", false,
			"The tool does many things rather well."},
		{"github alert", "> [!WARNING]\n> This project is no longer maintained by anyone.\n\nA parser for INI files with comments.\n", false,
			"A parser for INI files with comments."},
		{"short paragraph only as fallback", "# T\n\n**Why choose it?**\n\nT renders markdown to HTML fast.\n", false,
			"T renders markdown to HTML fast."},
		{"html only tagline", "<p align=\"center\">\n  <b>A tiny library for parsing dates.</b>\n</p>\n\n## Install\n\nRun the installer and wait a bit.\n", false,
			"A tiny library for parsing dates."},
		{"short when nothing longer", "# T\n\nHello.\n\n<p>Some HTML text block here.</p>\n", false, "Hello."},
		{"rst", `.. image:: https://img.shields.io/badge.svg
   :target: https://ci.example.com

=======
Project
=======

|build| |docs|

Project does ` + "``things``" + ` with ` + "`style <https://example.com>`_" + ` and :func:` + "`magic`" + `.

.. |build| image:: x.svg
`, true, "Project does things with style and magic."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mfReadmeParagraph(tt.text, tt.rst); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestManifestPurposeCapAndReadmeChoice(t *testing.T) {
	long := strings.Repeat("word ", 100) // 500 characters
	m, _ := mfBuild(t, map[string]string{
		"readme.rst": "Not this one.\n",
		"ReadMe.md":  "# X\n\n" + long + "\n",
	})
	if n := utf8.RuneCountInString(m.PurposeGuess); n > mfMaxPurpose || !strings.HasSuffix(m.PurposeGuess, "word…") {
		t.Errorf("purpose (%d runes) = %q", n, m.PurposeGuess)
	}
	// An empty README falls back to the manifest description.
	m, _ = mfBuild(t, map[string]string{
		"README":     "# Title only\n",
		"Cargo.toml": "[package]\nname = \"x\"\ndescription = \"\"\"  Crate\n description. \"\"\"\n",
	})
	if m.PurposeGuess != "Crate description." {
		t.Errorf("purpose = %q", m.PurposeGuess)
	}
	// A README with only a short line or an announcement: the root
	// manifest's description comes first.
	m, _ = mfBuild(t, map[string]string{
		"README.md":    "# X\n\nHello.\n\nWe're excited to announce X 2.0, out today with lots of fixes.\n",
		"package.json": `{"name": "x", "description": "Parses CSV files in the browser."}`,
	})
	if m.PurposeGuess != "Parses CSV files in the browser." {
		t.Errorf("purpose = %q", m.PurposeGuess)
	}
}

func TestManifestMixedAndStructure(t *testing.T) {
	files := map[string]string{
		"go.mod":                      "module github.com/acme/mono\n\nrequire github.com/google/uuid v1.6.0\n",
		"package.json":                `{"name": "mono-ui", "devDependencies": {"vitest": "^1.0.0"}}`,
		"pnpm-lock.yaml":              "",
		"Makefile":                    "",
		"README.md":                   "Monorepo.\n",
		"web/package.json":            `{"name": "web", "dependencies": {"vue": "^3.4.0"}}`,
		"web/src/main.ts":             "",
		"web/src/App.vue":             "",
		"api/main.go":                 "package main\nfunc main() {}\n",
		"api/handler.go":              "package main\n",
		"api/handler_test.go":         "package main\n",
		"pkg/a/a.go":                  "package a\n",
		"node_modules/x/package.json": `{"name": "x", "dependencies": {"evil": "1"}}`,
		"node_modules/x/index.js":     "",
		".github/workflows/ci.yml":    "",
	}
	m, notes := mfBuild(t, files)
	if len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	wantDeps := []Dependency{
		{Name: "github.com/google/uuid", Version: "v1.6.0", Type: "runtime", Source: "go.mod"},
		{Name: "vitest", Version: "^1.0.0", Type: "dev", Source: "package.json"},
		{Name: "vue", Version: "^3.4.0", Type: "runtime", Source: "web/package.json"},
	}
	if !reflect.DeepEqual(m.Dependencies, wantDeps) {
		t.Errorf("deps = %#v\nwant %#v", m.Dependencies, wantDeps)
	}
	want := Manifest{
		ProjectName:  "mono",
		ProjectType:  "mixed",
		PurposeGuess: "Monorepo.",
		StructureSummary: "Mixed project (go.mod (go), package.json (node)) with 15 files in 9 directories; " +
			"top-level directories by file count: api/ (3), web/ (3), node_modules/ (2), .github/ (1), pkg/ (1); 5 files at the root. " +
			"Languages by file count: Go (4), JSON (2), Markdown (1), TypeScript (1), Vue (1).",
		Dependencies:  wantDeps,
		EntryPoints:   []string{"api/main.go"},
		BuildSystem:   "make",
		TestFramework: "go test",
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("manifest = %#v\nwant       %#v", m, want)
	}

	delete(files, "Makefile")
	if m, _ := mfBuild(t, files); m.BuildSystem != "go" {
		t.Errorf("build system without Makefile = %q", m.BuildSystem)
	}
}

func TestManifestFallbacks(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		wantType  string
		wantBuild string
		summary   string
	}{
		{"empty", map[string]string{}, "unknown", "", "The tree is empty."},
		{"by extension", map[string]string{"a.rb": "", "b.rb": "", "c.py": "", "README.md": ""}, "ruby", "",
			"4 files, all at the root. Languages by file count: Ruby (2), Markdown (1), Python (1)."},
		{"docs only", map[string]string{"docs/a.md": "", "CMakeLists.txt": ""}, "unknown", "cmake",
			"2 files in 1 directory; top-level directories by file count: docs/ (1); 1 file at the root. Languages by file count: Markdown (1)."},
		{"subdir manifest only", map[string]string{"service/go.mod": "module x.test/svc\n", "service/main.go": "package main\n"}, "go", "go", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := mfBuild(t, tt.files)
			if m.ProjectType != tt.wantType || m.BuildSystem != tt.wantBuild || m.ProjectName != "repo" {
				t.Errorf("type %q build %q name %q", m.ProjectType, m.BuildSystem, m.ProjectName)
			}
			if tt.summary != "" && m.StructureSummary != tt.summary {
				t.Errorf("summary = %q\nwant      %q", m.StructureSummary, tt.summary)
			}
		})
	}
}

func TestManifestTopLevelCap(t *testing.T) {
	files := map[string]string{}
	for i, d := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		for k := 0; k <= i%3; k++ {
			files[d+"/f"+string(rune('0'+k))] = ""
		}
	}
	m, _ := mfBuild(t, files)
	want := "19 files in 10 directories; top-level directories by file count: c/ (3), f/ (3), i/ (3), b/ (2), e/ (2), h/ (2), a/ (1), d/ (1), and 2 more."
	if m.StructureSummary != want {
		t.Errorf("summary = %q\nwant      %q", m.StructureSummary, want)
	}
}

func TestManifestDeterministic(t *testing.T) {
	contents := map[string]string{
		"go.mod":             "module example.com/d\n\nrequire (\n\tb.test/b v1.0.0\n\ta.test/a v1.0.0\n)\n",
		"package.json":       `{"dependencies": {"z": "1", "a": "2", "m": "3"}, "devDependencies": {"jest": "1", "vitest": "1"}, "bin": {"b": "b.js", "a": "a.js"}}`,
		"a.js":               "",
		"b.js":               "",
		"pyproject.toml":     "[project]\nname='p'\ndependencies=['y','x']\n[project.optional-dependencies]\nzz=['q']\ndev=['r']\n",
		"Cargo.toml":         "[package]\nname='c'\n[dependencies]\nb='1'\na='1'\n",
		"svc/a/go.mod":       "module example.com/a\nrequire c.test/c v1.0.0\n",
		"svc/b/package.json": `{"peerDependencies": {"p": "1"}}`,
		"README.md":          "# D\n\nDeterministic.\n",
		"src/x.go":           "", "src/y.ts": "", "lib/z.py": "", "lib/w.py": "",
	}
	tr := newMFTree(contents)
	m1, n1 := BuildManifest(context.Background(), "repo", tr.files, mfAll, nil)
	m2, n2 := BuildManifest(context.Background(), "repo", tr.files, mfAll, nil)
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(n1, n2) {
		t.Fatalf("two runs differ:\n%#v\n%#v", m1, m2)
	}
	// The order of the input files does not matter either.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := slices.Clone(tr.files)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		m3, n3 := BuildManifest(context.Background(), "repo", shuffled, mfAll, nil)
		if !reflect.DeepEqual(m1, m3) || !reflect.DeepEqual(n1, n3) {
			t.Fatalf("shuffled input differs:\n%#v\n%#v", m1, m3)
		}
	}
	// Mixed: go comes first, but has no tests; vitest precedes jest.
	if m1.TestFramework != "vitest" || m1.BuildSystem != "go" || m1.ProjectName != "d" {
		t.Errorf("manifest = %#v", m1)
	}
	var sources []string
	for _, d := range m1.Dependencies {
		sources = append(sources, d.Source)
	}
	wantSources := []string{"Cargo.toml", "Cargo.toml", "go.mod", "go.mod", "package.json", "package.json", "package.json",
		"package.json", "package.json", "pyproject.toml", "pyproject.toml", "pyproject.toml", "pyproject.toml",
		"svc/a/go.mod", "svc/b/package.json"}
	if !reflect.DeepEqual(sources, wantSources) {
		t.Errorf("sources = %q", sources)
	}
}
