// Command fpbench measures ctxpack's false positives on real repositories
// (issue 13): it takes each repository's head tree as it is (cloned at run
// time from a URL, or from a local clone or mirror), packs every file of it
// with the ctxpack binary (one commit, tree scope, limits high enough that
// nothing is cut; as a Full pack and as a Summary pack, whose derived
// strings are scanned too), and prints the redactions per MB of text, the
// findings by rule, a sample of the redacted lines, the redactions that fall in the
// classes issue 13 says must never be redacted (checksums, workflow
// expressions and permissions, package versions, struct tags), and every
// finding without a real file line or a fingerprint.
//
//	go run ./bench/cmd/fpbench [-ctxpack BIN] [-type full,summary] [-samples N] [-keep] SOURCE...
//
// SOURCE is a git URL (cloned with --depth 1) or a local repository or
// mirror (its HEAD). Blobs a mirror lacks (large files left out of a
// snapshot) are skipped and counted. A repository's own .gitleaks.toml,
// .gitleaksignore and .ctxpack.yml are left out: the figures are ctxpack's
// defaults.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	bin := flag.String("ctxpack", "", "ctxpack binary (default: build ./cmd/ctxpack from the current directory)")
	samples := flag.Int("samples", 40, "redacted lines to print per repository")
	keep := flag.Bool("keep", false, "keep the work directory and print its path")
	types := flag.String("type", "full,summary", "pack types to measure, comma-separated")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: fpbench [-ctxpack BIN] [-samples N] [-keep] SOURCE... (a git URL or a local repository)")
		os.Exit(2)
	}
	if err := run(*bin, *samples, *keep, strings.Split(*types, ","), flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "fpbench:", err)
		os.Exit(1)
	}
}

func run(bin string, samples int, keep bool, types, sources []string) error {
	work, err := os.MkdirTemp("", "fpbench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}
	if bin == "" {
		bin = filepath.Join(work, "ctxpack")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/ctxpack")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build ctxpack (run from the module root, or pass -ctxpack): %w", err)
		}
	}
	for i, src := range sources {
		dir := filepath.Join(work, fmt.Sprintf("repo%d", i))
		st, err := importTree(src, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		if err := measure(bin, src, dir, st, samples, types); err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
	}
	return nil
}

type importStats struct {
	files, missing, skipped int
	commit                  string
}

// importTree copies the head tree of src into a new one-commit repository
// at dir.
func importTree(src, dir string) (importStats, error) {
	var st importStats
	clone := dir + ".src"
	args := []string{"clone", "--quiet", "--no-checkout"}
	if strings.Contains(src, "://") || strings.HasPrefix(src, "git@") {
		args = append(args, "--depth", "1")
	}
	if out, err := exec.Command("git", append(args, src, clone)...).CombinedOutput(); err != nil {
		return st, fmt.Errorf("git clone: %v: %s", err, out)
	}
	defer os.RemoveAll(clone)
	commit, err := gitOut(clone, "rev-parse", "HEAD")
	if err != nil {
		return st, err
	}
	st.commit = strings.TrimSpace(commit)
	list, err := gitOut(clone, "ls-tree", "-r", "-z", "HEAD")
	if err != nil {
		return st, err
	}
	type entry struct{ mode, id, path string }
	var entries []entry
	for _, rec := range strings.Split(strings.TrimSuffix(list, "\x00"), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		if f[1] != "blob" || f[0] == "120000" {
			st.skipped++ // submodules and symlinks
			continue
		}
		if base := path.Base(p); base == ".gitleaks.toml" || base == ".gitleaksignore" || base == ".ctxpack.yml" || base == ".ctxpackignore" {
			st.skipped++
			continue
		}
		entries = append(entries, entry{f[0], f[2], p})
	}
	// Read every blob through one cat-file --batch; a missing one answers
	// "<id> missing".
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = clone
	var in bytes.Buffer
	for _, e := range entries {
		in.WriteString(e.id + "\n")
	}
	cmd.Stdin = &in
	out, err := cmd.StdoutPipe()
	if err != nil {
		return st, err
	}
	if err := cmd.Start(); err != nil {
		return st, err
	}
	r := bufio.NewReaderSize(out, 1<<20)
	for _, e := range entries {
		header, err := r.ReadString('\n')
		if err != nil {
			return st, fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(header)
		if len(f) == 2 && f[1] == "missing" {
			st.missing++
			continue
		}
		if len(f) != 3 {
			return st, fmt.Errorf("git cat-file: unexpected %q", header)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return st, err
		}
		data := make([]byte, n+1) // the content and its trailing newline
		if _, err := io.ReadFull(r, data); err != nil {
			return st, err
		}
		full := filepath.Join(dir, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return st, err
		}
		perm := os.FileMode(0o644)
		if e.mode == "100755" {
			perm = 0o755
		}
		if err := os.WriteFile(full, data[:n], perm); err != nil {
			return st, err
		}
		st.files++
	}
	if err := cmd.Wait(); err != nil {
		return st, fmt.Errorf("git cat-file: %w", err)
	}
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--no-verify", "-m", "import " + st.commit}} {
		if _, err := gitOut(dir, a...); err != nil {
			return st, err
		}
	}
	return st, nil
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=fpbench", "GIT_AUTHOR_EMAIL=fpbench@localhost", "GIT_COMMITTER_NAME=fpbench",
		"GIT_COMMITTER_EMAIL=fpbench@localhost", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, stderr.String())
	}
	return string(out), nil
}

// recordDoc is the part of the record fpbench reads.
type recordDoc struct {
	Ledger []struct {
		Path          string `json:"path"`
		Included      bool   `json:"included"`
		Reason        string `json:"reason"`
		BytesOriginal *int64 `json:"bytes_original"` // absent for a file holding a secret
	} `json:"ledger"`
	Secrets []struct {
		Path        string `json:"path"`
		Line        int    `json:"line"`
		RuleID      string `json:"rule_id"`
		Fingerprint string `json:"fingerprint"`
		Where       string `json:"where"`
	} `json:"secrets"`
}

// mustNot are the kinds of text issue 13 says must never be redacted,
// recognised on the original line of a redaction.
var mustNot = []struct {
	name string
	re   *regexp.Regexp
}{
	{"checksum", regexp.MustCompile(`\bh1:[A-Za-z0-9+/]{43}=|sha(?:1|256|384|512)[-:][A-Za-z0-9+/=]{27,}|"integrity"`)},
	{"workflow expression", regexp.MustCompile(`\$\{\{[^}]*\}\}`)},
	{"workflow permission", regexp.MustCompile(`^\s*[\w-]+:\s*(?:read|write|none)\s*$`)},
	{"package version", regexp.MustCompile(`"[@\w./-]+"\s*:\s*"[\^~<>=]*\s*v?\d+(?:\.[\dx*]+)+[^"]*"`)},
	{"struct tag", regexp.MustCompile("`[^`]*\\b(?:json|yaml|toml|xml|mapstructure|db|form):\"[^\"]*\"[^`]*`|omitempty")},
}

func measure(bin, src, dir string, st importStats, samples int, types []string) error {
	fmt.Printf("\n%s @ %s\n", src, st.commit)
	fmt.Printf("  tree: %d files imported (%d blobs missing from the source, %d links, submodules and config files left out)\n",
		st.files, st.missing, st.skipped)
	for _, typ := range types {
		if err := measureType(bin, dir, typ, samples); err != nil {
			return err
		}
	}
	return nil
}

// measureType packs dir as a pack of type typ and prints its findings.
func measureType(bin, dir, typ string, samples int) error {
	out := filepath.Join(dir+".out", typ+".json")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.Command(bin, "pack", "-C", dir, "--commit", "HEAD", "--scope", "tree", "--type", typ,
		"--max-files", "1000000", "--max-content-bytes", "4000000000", "--max-file-bytes", "100000000", "-o", out)
	log, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return fmt.Errorf("ctxpack pack: %v\n%s", err, tail(log, 2000))
	}
	var rec recordDoc
	b, err := os.ReadFile(out + ".record.json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	var textBytes int64
	readable := 0
	for _, row := range rec.Ledger {
		if row.Included || row.Reason == "" || row.Reason == "size_limit" || row.Reason == "credentials" {
			if row.BytesOriginal != nil {
				textBytes += *row.BytesOriginal
			} else if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(row.Path))); err == nil {
				textBytes += fi.Size() // the record withholds it: read it from the imported tree
			}
			readable++
		}
	}
	mb := float64(textBytes) / 1e6
	// What leaves: findings in contents, diffs, the manifest, a summary's
	// strings and names (a history finding is reported, not redacted). A
	// line found in a file's content and again in its diff counts once.
	type hit struct {
		path, rule, line, where string
		n                       int
	}
	var hits []hit
	seen := map[string]bool{}
	byRule := map[string]int{}
	files := map[string]bool{}
	bad := 0
	for _, s := range rec.Secrets {
		if (s.Line <= 0 && s.Where != "name") || s.Fingerprint == "" {
			bad++
			fmt.Printf("      no line or fingerprint: %s %s:%d (%s) %q\n", s.Where, s.Path, s.Line, s.RuleID, s.Fingerprint)
		}
		if s.Where == "history" {
			continue
		}
		k := fmt.Sprintf("%s:%d:%s", s.Path, s.Line, s.RuleID)
		if seen[k] {
			continue
		}
		seen[k] = true
		l := ""
		if orig, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s.Path))); err == nil {
			if lines := strings.Split(string(orig), "\n"); s.Line >= 1 && s.Line <= len(lines) {
				l = lines[s.Line-1]
			}
		}
		hits = append(hits, hit{s.Path, s.RuleID, l, s.Where, s.Line})
		byRule[s.RuleID]++
		files[s.Path] = true
	}
	perMB := 0.0
	if mb > 0 {
		perMB = float64(len(hits)) / mb
	}
	fmt.Printf("  %s pack: %d text files, %.2f MB; %d redactions in %d files = %.2f per MB\n", typ, readable, mb, len(hits), len(files), perMB)
	var rules []string
	for r := range byRule {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool {
		return byRule[rules[i]] > byRule[rules[j]] || byRule[rules[i]] == byRule[rules[j]] && rules[i] < rules[j]
	})
	var parts []string
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%s %d", r, byRule[r]))
	}
	fmt.Printf("    by rule: %s\n", strings.Join(parts, ", "))
	forbidden := map[string][]hit{}
	for _, h := range hits {
		for _, m := range mustNot {
			if m.re.MatchString(h.line) {
				forbidden[m.name] = append(forbidden[m.name], h)
				break
			}
		}
	}
	for _, m := range mustNot {
		fmt.Printf("    redactions of a %s: %d\n", m.name, len(forbidden[m.name]))
		for _, h := range forbidden[m.name] {
			fmt.Printf("      %s:%d %s: %s\n", h.path, h.n, h.rule, clip(strings.TrimSpace(h.line), 160))
		}
	}
	fmt.Printf("    findings without a real file line or a fingerprint: %d of %d\n", bad, len(rec.Secrets))
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].path != hits[j].path {
			return hits[i].path < hits[j].path
		}
		return hits[i].n < hits[j].n
	})
	step := 1
	if len(hits) > samples && samples > 0 {
		step = (len(hits) + samples - 1) / samples
	}
	if samples > 0 && len(hits) > 0 {
		fmt.Printf("    sample of redacted lines (every %d.):\n", step)
		for i := 0; i < len(hits); i += step {
			h := hits[i]
			fmt.Printf("      %s:%d %s (%s): %s\n", h.path, h.n, h.rule, h.where, clip(strings.TrimSpace(h.line), 160))
		}
	}
	return nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
