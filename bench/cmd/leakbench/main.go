// Command leakbench measures what ctxpack lets out of a repository full of
// planted secrets (issue 13). It generates, at run time and from a seed, a
// git repository with realistic synthetic credentials — the usual
// providers' tokens, private keys, service accounts, credentialed URLs, and
// the leak classes of issue 13: files gitleaks allowlists by path (1),
// backslash-escaped strings (2), password forms no key names (3), passwords
// that look like placeholders (4), secrets in file names (5) — in many file
// kinds, in unchanged files, in lines the range adds, in a commit of the
// range that a later commit undoes, in names, and where the intent and the
// manifest cap a text (the range's commit message, the pull request's title
// and body, the README's purpose). None of them was ever issued; nothing
// third-party is in this source.
//
// Then, for each secrets action (redact, exclude, fail), it runs the ctxpack
// binary as a user would — pack in every format (json, markdown, xml) and
// as a Summary pack, the records, every read profile, the audit (text and
// JSON, against the repository), and the GitHub Action step on a pull
// request (annotations and log, job summary, step outputs, SARIF, the files
// it keeps, and the PR comment, received by a local HTTP server) — and
// looks for every planted secret in every output. It prints leaked /
// planted per mode, per class and per place, the outputs that leaked, and
// the file versions holding a secret whose git blob id or sha256 is in an
// output (issue 13, class 6: either lets anyone confirm a guess offline).
// It exits 1 when anything leaked, 2 when a run could not complete.
//
//	go run ./bench/cmd/leakbench [-seed N] [-ctxpack BIN] [-keep]
package main

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ctxpack/ctxpack/internal/leakcorpus"
)

func main() {
	seed := flag.Uint64("seed", 13, "seed of the generated corpus")
	bin := flag.String("ctxpack", "", "ctxpack binary (default: build ./cmd/ctxpack from the current directory)")
	keep := flag.Bool("keep", false, "keep the work directory (repository and outputs) and print its path")
	modes := flag.String("modes", "redact,exclude,fail", "secrets actions to run, comma-separated")
	flag.Parse()
	code, err := run(*seed, *bin, *keep, strings.Split(*modes, ","))
	if err != nil {
		fmt.Fprintln(os.Stderr, "leakbench:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(seed uint64, bin string, keep bool, modes []string) (int, error) {
	work, err := os.MkdirTemp("", "leakbench-")
	if err != nil {
		return 0, err
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
			return 0, fmt.Errorf("build ctxpack (run from the module root, or pass -ctxpack): %w", err)
		}
	}
	c := leakcorpus.Build(seed)
	repo := filepath.Join(work, "repo")
	base, head, err := c.Commit(repo)
	if err != nil {
		return 0, err
	}
	gh := newFakeGitHub()
	defer gh.close()

	byWhere, byClass := map[string]int{}, map[string]int{}
	for _, p := range c.Plants {
		byWhere[p.Where]++
		byClass[p.Class]++
	}
	kinds := c.Kinds()
	fmt.Printf("corpus: %d secrets planted (seed %d) in %d file kinds: %s\n", len(c.Plants), seed, len(kinds), strings.Join(kinds, " "))
	fmt.Printf("  by place: %s\n  by class: %s\n", counts(byWhere), counts(byClass))

	total := 0
	for _, mode := range modes {
		outs, err := collect(bin, work, repo, base, head, mode, c, gh)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", mode, err)
		}
		total += report(mode, c, outs)
	}
	if total > 0 {
		return 1, nil
	}
	return 0, nil
}

func counts(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// output is one thing a run let out.
type output struct {
	name string
	data []byte
}

// collect runs every command of one secrets action and returns all they
// wrote and printed.
func collect(bin, work, repo, base, head, mode string, c *leakcorpus.Corpus, gh *fakeGitHub) ([]output, error) {
	dir := filepath.Join(work, "out-"+mode)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var outs []output
	// ctxpack exits 1 when the verdict fails (a planted secret in the
	// history does); 2 and more mean it could not do its work.
	ctx := func(name string, env []string, args ...string) error {
		cmd := exec.Command(bin, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		outs = append(outs, output{name + " (stdout+stderr)", out})
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			return fmt.Errorf("ctxpack %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	packArgs := []string{"pack", "--base", base, "--head", head, "--secrets-action", mode}
	files := map[string]string{}
	for _, f := range []struct{ name, format, typ string }{
		{"pack.json", "json", "full"}, {"pack.md", "markdown", "full"}, {"pack.xml", "xml", "full"}, {"summary.json", "json", "summary"},
	} {
		out := filepath.Join(dir, f.name)
		if err := ctx("pack "+f.name, nil, append(packArgs, "--format", f.format, "--type", f.typ, "-o", out)...); err != nil {
			return nil, err
		}
		files[f.name] = out
		files[f.name+".record.json"] = out + ".record.json"
	}
	for _, p := range []string{"pack.json", "summary.json"} {
		for _, profile := range []string{"orchestrator", "reviewer", "executor"} {
			if err := ctx("read "+p+" "+profile, nil, "read", filepath.Join(dir, p), "--profile", profile, "--limit", "100000"); err != nil {
				return nil, err
			}
		}
		for _, j := range []string{"", "--json"} {
			args := []string{"audit", filepath.Join(dir, p), "--repo", repo}
			if j != "" {
				args = append(args, j)
			}
			if err := ctx("audit "+p+" "+j, nil, args...); err != nil {
				return nil, err
			}
		}
	}
	actionOuts, err := runAction(bin, dir, repo, base, head, mode, c, gh)
	if err != nil {
		return nil, err
	}
	outs = append(outs, actionOuts...)
	for name, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s was not written: %w", name, err)
		}
		outs = append(outs, output{name, b})
	}
	return outs, nil
}

// runAction runs `ctxpack action` on a pull_request event of the range (the
// corpus's title and body), with the GitHub API served by gh, and returns
// its log, job summary, step outputs, the files it keeps and the PR
// comments it posted.
func runAction(bin, dir, repo, base, head, mode string, c *leakcorpus.Corpus, gh *fakeGitHub) ([]output, error) {
	event := map[string]any{
		"action": "synchronize", "number": 7,
		"pull_request": map[string]any{
			"number": 7, "state": "open", "title": c.PRTitle, "body": c.PRBody,
			"head": map[string]any{"sha": head, "ref": "feature", "repo": map[string]any{"full_name": "corp/billing"}},
			"base": map[string]any{"sha": base, "ref": "main", "repo": map[string]any{"full_name": "corp/billing"}},
		},
		"repository": map[string]any{"full_name": "corp/billing", "default_branch": "main"},
	}
	eventFile := filepath.Join(dir, "event.json")
	b, _ := json.Marshal(event)
	if err := os.WriteFile(eventFile, b, 0o644); err != nil {
		return nil, err
	}
	summary, outputsFile := filepath.Join(dir, "step-summary.md"), filepath.Join(dir, "step-outputs.txt")
	for _, f := range []string{summary, outputsFile} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return nil, err
		}
	}
	gh.reset()
	env := []string{
		"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + eventFile, "GITHUB_WORKSPACE=" + repo,
		"GITHUB_REPOSITORY=corp/billing", "GITHUB_SHA=" + head, "GITHUB_API_URL=" + gh.url, "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_RUN_ID=1", "GITHUB_STEP_SUMMARY=" + summary, "GITHUB_OUTPUT=" + outputsFile,
		"INPUT_SECRETS-ACTION=" + mode, "INPUT_SARIF=true", "INPUT_COMMENT=true", "INPUT_FAIL-ON-VIOLATION=true",
		"INPUT_GITHUB-TOKEN=bench-token",
	}
	cmd := exec.Command(bin, "action")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), env...)
	log, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return nil, fmt.Errorf("ctxpack action: %v\n%s", err, log)
	}
	outs := []output{{"action log and annotations", log}}
	for name, p := range map[string]string{"action job summary": summary, "action step outputs": outputsFile} {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		outs = append(outs, output{name, b})
	}
	kept := filepath.Join(repo, ".ctxpack-action")
	entries, err := os.ReadDir(kept)
	if err != nil {
		return nil, fmt.Errorf("the action kept no files: %w", err)
	}
	sarif := false
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(kept, e.Name()))
		if err != nil {
			return nil, err
		}
		sarif = sarif || strings.HasSuffix(e.Name(), ".sarif") || strings.Contains(e.Name(), "sarif")
		outs = append(outs, output{"action file " + e.Name(), b})
	}
	if !sarif {
		return nil, fmt.Errorf("the action wrote no SARIF file (in %s)", kept)
	}
	comments := gh.bodies()
	if len(comments) == 0 {
		return nil, errors.New("the action posted no pull request comment")
	}
	for i, c := range comments {
		outs = append(outs, output{fmt.Sprintf("action PR comment %d", i+1), []byte(c)})
	}
	if err := os.RemoveAll(kept); err != nil {
		return nil, err
	}
	return outs, nil
}

// report prints the results of one mode and returns how many secrets leaked.
func report(mode string, c *leakcorpus.Corpus, outs []output) int {
	leakedBy := map[int][]string{} // plant index → outputs holding it
	for i, p := range c.Plants {
		for _, o := range outs {
			if p.Leaked(o.data) {
				leakedBy[i] = append(leakedBy[i], o.name)
			}
		}
	}
	type tally struct{ leaked, planted int }
	byClass, byWhere := map[string]*tally{}, map[string]*tally{}
	for i, p := range c.Plants {
		for _, m := range []struct {
			m map[string]*tally
			k string
		}{{byClass, p.Class}, {byWhere, p.Where}} {
			if m.m[m.k] == nil {
				m.m[m.k] = &tally{}
			}
			m.m[m.k].planted++
			if len(leakedBy[i]) > 0 {
				m.m[m.k].leaked++
			}
		}
	}
	line := func(m map[string]*tally) string {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d/%d", k, m[k].leaked, m[k].planted))
		}
		return strings.Join(parts, ", ")
	}
	digests := originalDigests(c, outs)
	fmt.Printf("\nmode %s: %d/%d leaked, checked in %d outputs\n", mode, len(leakedBy), len(c.Plants), len(outs))
	fmt.Printf("  by class (leaked/planted): %s\n", line(byClass))
	fmt.Printf("  by place (leaked/planted): %s\n", line(byWhere))
	var idx []int
	for i := range leakedBy {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		p := c.Plants[i]
		fmt.Printf("  LEAK %s %s %s (%s, %s) in: %s\n", p.Class, p.Where, p.Provider, p.Kind, p.Path, strings.Join(leakedBy[i], "; "))
	}
	fmt.Printf("  original digests: %d/%d file versions holding a secret have their blob id or sha256 in an output\n", len(digests.leaked), digests.versions)
	for _, l := range digests.leaked {
		fmt.Printf("  DIGEST %s\n", l)
	}
	return len(leakedBy) + len(digests.leaked)
}

type digestTally struct {
	versions int
	leaked   []string
}

// originalDigests looks for the git blob id and the sha256 of every
// version (base, head) of a file that holds a planted secret.
func originalDigests(c *leakcorpus.Corpus, outs []output) digestTally {
	var t digestTally
	seen := map[string]bool{}
	for _, p := range c.Plants {
		for _, v := range []struct {
			name  string
			files map[string]string
		}{{"base", c.Base}, {"head", c.Head}} {
			content, ok := v.files[p.Path]
			if !ok || seen[v.name+"\x00"+p.Path] || !p.Leaked([]byte(content)) {
				continue
			}
			seen[v.name+"\x00"+p.Path] = true
			t.versions++
			blob := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
			sum := sha256.Sum256([]byte(content))
			var in []string
			for _, o := range outs {
				if strings.Contains(string(o.data), hex.EncodeToString(blob[:])) || strings.Contains(string(o.data), hex.EncodeToString(sum[:])) {
					in = append(in, o.name)
				}
			}
			if len(in) > 0 {
				t.leaked = append(t.leaked, fmt.Sprintf("%s %s in: %s", v.name, p.Path, strings.Join(in, "; ")))
			}
		}
	}
	sort.Strings(t.leaked)
	return t
}

// fakeGitHub answers the two REST calls of the sticky comment on
// 127.0.0.1: list a pull request's comments (none) and create one.
type fakeGitHub struct {
	url  string
	srv  *http.Server
	mu   sync.Mutex
	body []string
}

func newFakeGitHub() *fakeGitHub {
	gh := &fakeGitHub{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	gh.url = "http://" + ln.Addr().String() + "/"
	gh.srv = &http.Server{Handler: http.HandlerFunc(gh.serve)}
	go func() { _ = gh.srv.Serve(ln) }()
	return gh
}

func (gh *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/comments"):
		_, _ = io.WriteString(w, "[]")
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/comments"):
		var c struct {
			Body string `json:"body"`
		}
		_ = json.NewDecoder(r.Body).Decode(&c)
		gh.mu.Lock()
		gh.body = append(gh.body, c.Body)
		gh.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id": 1, "html_url": "https://github.com/corp/billing/pull/7#issuecomment-1"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message": "Not Found"}`)
	}
}

func (gh *fakeGitHub) reset() {
	gh.mu.Lock()
	gh.body = nil
	gh.mu.Unlock()
}

func (gh *fakeGitHub) bodies() []string {
	gh.mu.Lock()
	defer gh.mu.Unlock()
	return append([]string(nil), gh.body...)
}

func (gh *fakeGitHub) close() { _ = gh.srv.Close() }
