// Package corpus generates deterministic repositories for benchmarks: N files
// of mixed languages and sizes, some binary, some ignored by .gitignore, in a
// directory tree of realistic depth. The same (n, seed) always gives the same
// bytes.
package corpus

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kind is one generated file flavour.
type kind struct {
	ext  string
	body func(r *rand.Rand, name string, lines int) string
}

var kinds = []kind{
	{".go", goFile}, {".go", goFile}, {".go", goFile},
	{".ts", tsFile}, {".ts", tsFile},
	{".py", pyFile}, {".py", pyFile},
	{".rs", rsFile},
	{".java", javaFile},
	{".md", mdFile},
	{".json", jsonFile},
	{".yaml", yamlFile},
}

var words = strings.Fields("alpha beta gamma delta user order cache token session route handler model store client server config index parse render queue event")

// Files generates n files, by slash-separated path. About 2% of the files
// are binary and about 3% sit under an ignored build/ directory; file sizes
// follow a long tail from a few lines to a few thousand.
func Files(n int, seed int64) map[string][]byte {
	r := rand.New(rand.NewSource(seed))
	files := map[string][]byte{
		".gitignore": []byte("/build/\n*.tmp\n"),
		"go.mod":     []byte("module example.com/corpus\n\ngo 1.22\n"),
		"README.md":  []byte("# corpus\n\nA generated repository for ctxpack benchmarks.\n"),
	}
	for i := 0; len(files) < n; i++ {
		top := words[r.Intn(len(words))]
		sub := words[r.Intn(len(words))]
		name := fmt.Sprintf("%s_%d", words[r.Intn(len(words))], i)
		switch x := r.Intn(100); {
		case x < 2:
			data := make([]byte, 512+r.Intn(4096))
			r.Read(data)
			data[0] = 0
			files[fmt.Sprintf("assets/%s/%s.bin", sub, name)] = data
		case x < 5:
			files[fmt.Sprintf("build/%s/%s.js", sub, name)] = []byte("// generated\n")
		default:
			k := kinds[r.Intn(len(kinds))]
			lines := 5 + int(r.ExpFloat64()*60)
			if lines > 3000 {
				lines = 3000
			}
			files[fmt.Sprintf("%s/%s/%s%s", top, sub, name, k.ext)] = []byte(k.body(r, name, lines))
		}
	}
	return files
}

// Generate writes Files(n, seed) into dir (created if needed).
func Generate(dir string, n int, seed int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for p, data := range Files(n, seed) {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GitInit turns dir into a git repository with one commit of everything.
func GitInit(dir string) error {
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"commit", "-q", "-m", "corpus"},
	} {
		if err := Git(dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// Git runs git in dir with a fixed identity and date.
func Git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=corpus", "GIT_AUTHOR_EMAIL=corpus@example.com",
		"GIT_COMMITTER_NAME=corpus", "GIT_COMMITTER_EMAIL=corpus@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func ident(r *rand.Rand) string {
	return words[r.Intn(len(words))] + title(words[r.Intn(len(words))])
}

func goFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n", words[r.Intn(len(words))])
	for b.Len() < lines*30 {
		fn := ident(r)
		fmt.Fprintf(&b, "// %s handles %s.\nfunc %s(in string) string {\n\tif strings.HasPrefix(in, %q) {\n\t\treturn fmt.Sprint(in)\n\t}\n\treturn in\n}\n\n", title(fn), words[r.Intn(len(words))], title(fn), words[r.Intn(len(words))])
	}
	return b.String()
}

func tsFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "import { %s } from './%s';\n\n", ident(r), words[r.Intn(len(words))])
	for b.Len() < lines*30 {
		fmt.Fprintf(&b, "export function %s(input: string): string {\n  return input.trim();\n}\n\n", ident(r))
	}
	return b.String()
}

func pyFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "import os\nfrom .%s import %s\n\n", words[r.Intn(len(words))], ident(r))
	for b.Len() < lines*30 {
		fmt.Fprintf(&b, "def %s(value):\n    return str(value).strip()\n\n", strings.ToLower(ident(r)))
	}
	return b.String()
}

func rsFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	b.WriteString("use std::collections::HashMap;\n\n")
	for b.Len() < lines*30 {
		fmt.Fprintf(&b, "pub fn %s(input: &str) -> String {\n    input.to_string()\n}\n\n", strings.ToLower(ident(r)))
	}
	return b.String()
}

func javaFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package com.example.%s;\n\nimport java.util.List;\n\npublic class C%s {\n", words[r.Intn(len(words))], strings.ReplaceAll(name, "_", ""))
	for b.Len() < lines*30 {
		fmt.Fprintf(&b, "    public String %s(String in) { return in.trim(); }\n", ident(r))
	}
	b.WriteString("}\n")
	return b.String()
}

func mdFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", name)
	for b.Len() < lines*40 {
		fmt.Fprintf(&b, "The %s %s keeps the %s.\n", words[r.Intn(len(words))], words[r.Intn(len(words))], words[r.Intn(len(words))])
	}
	return b.String()
}

func jsonFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	b.WriteString("{\n")
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "  \"%s_%d\": %d,\n", words[r.Intn(len(words))], i, r.Intn(1000))
	}
	b.WriteString("  \"end\": true\n}\n")
	return b.String()
}

func yamlFile(r *rand.Rand, name string, lines int) string {
	var b strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "%s_%d: %s\n", words[r.Intn(len(words))], i, words[r.Intn(len(words))])
	}
	return b.String()
}

// title upper-cases the first letter of an ASCII word.
func title(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
