package audit

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/ctxpack/ctxpack/pack"
)

var (
	defaultScannerOnce sync.Once
	defaultScanner     *Scanner
	defaultScannerErr  error
)

// newDefaultScanner shares one default-rules scanner between tests.
func newDefaultScanner(t testing.TB) *Scanner {
	t.Helper()
	defaultScannerOnce.Do(func() {
		defaultScanner, defaultScannerErr = NewScanner(ScannerOptions{})
	})
	if defaultScannerErr != nil {
		t.Fatal(defaultScannerErr)
	}
	return defaultScanner
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lineOf is the 1-based line of byte offset off.
func lineOf(content string, off int) int { return strings.Count(content[:off], "\n") + 1 }

func describe(content string, fs []pack.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		v := "<bad span>"
		if f.Start >= 0 && f.Start <= f.End && f.End <= len(content) {
			v = content[f.Start:f.End]
		}
		if len(v) > 60 {
			v = v[:60] + "…"
		}
		fmt.Fprintf(&b, "\n  %s L%d-%d %q", f.RuleID, f.StartLine, f.EndLine, v)
	}
	return b.String()
}

// TestScanPlantedSecrets plants one secret per case in realistic files and
// checks rule, line and exact span.
func TestScanPlantedSecrets(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(7)
	tests := []struct {
		name, path string
		before     string // content before the secret
		secret     string
		after      string
		rules      []string // any of these rule ids
	}{
		{"aws access key id", "deploy/aws.tf",
			"provider \"aws\" {\n  region     = \"eu-west-1\"\n  access_key = \"", f.AWSKeyID, "\"\n}\n",
			[]string{"aws-access-token"}},
		{"aws secret access key", ".aws/credentials",
			"[default]\naws_access_key_id = " + f.AWSKeyID + "\naws_secret_access_key = ", f.AWSSecret, "\n",
			[]string{"generic-api-key", RulePasswordAssignment}},
		{"github token", ".github/scripts/release.sh",
			"#!/bin/sh\nset -eu\ncurl -H \"Authorization: token ", f.GitHub, "\" https://api.github.com/user\n",
			[]string{"github-pat"}},
		{"slack bot token", "bot/config.py",
			"import os\n\nSLACK_CHANNEL = \"#deploys\"\nclient = WebClient(token=\"", f.Slack, "\")\n",
			[]string{"slack-bot-token"}},
		{"rsa private key", "certs/server.go",
			"package certs\n\n// testKey is used by the TLS fixture.\nconst testKey = `", f.RSAKey, "`\n",
			[]string{"private-key"}},
		{"openssh private key", "infra/bootstrap.yaml",
			"users:\n  - name: deploy\n    ssh_key: |\n      ", strings.ReplaceAll(f.OpenSSHKey, "\n", "\n      "), "\n",
			[]string{"private-key"}},
		{"jwt", "tests/fixtures/request.http",
			"GET /api/me HTTP/1.1\nHost: api.internal\nAuthorization: Bearer ", f.JWT, "\n\n",
			[]string{"jwt"}},
		{"stripe live key", "payments/stripe.rb",
			"Stripe.api_version = '2024-04-10'\nStripe.api_key = '", f.Stripe, "'\n",
			[]string{"stripe-access-token"}},
		{"generic api key assignment", "src/client.ts",
			"export const client = new Client({\n  baseUrl: \"https://api.internal\",\n  api_key: \"", f.APIKey, "\",\n});\n",
			[]string{"generic-api-key", RulePasswordAssignment}},
		{"database url", "config/database.yml",
			"production:\n  adapter: postgresql\n  url: postgres://orders:", f.DBPassword, "@db.internal:5432/orders\n",
			[]string{RulePasswordInURL}},
		{"password assignment", ".env.production",
			"APP_ENV=production\nDB_USER=orders\nDB_PASSWORD=", f.DBPassword, "\n",
			[]string{"generic-api-key", RulePasswordAssignment}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := tt.before + tt.secret + tt.after
			wantStart := len(tt.before)
			wantLine := lineOf(content, wantStart)
			wantEnd := lineOf(content, wantStart+len(tt.secret)-1)
			fs, err := s.Scan(context.Background(), tt.path, []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			// Several gitleaks rules may report the same secret (e.g.
			// curl-auth-header and github-pat); one of them must be the
			// expected rule.
			var hit *pack.Finding
			for i := range fs {
				if fs[i].Start < wantStart+len(tt.secret) && wantStart < fs[i].End {
					if hit == nil || (!contains(tt.rules, hit.RuleID) && contains(tt.rules, fs[i].RuleID)) {
						hit = &fs[i]
					}
				}
			}
			if hit == nil {
				t.Fatalf("secret not found; findings:%s", describe(content, fs))
			}
			if !contains(tt.rules, hit.RuleID) {
				t.Errorf("rule %q, want one of %q", hit.RuleID, tt.rules)
			}
			if got := content[hit.Start:hit.End]; got != tt.secret {
				t.Errorf("span %q, want exactly %q", got, tt.secret)
			}
			if hit.StartLine != wantLine || hit.EndLine != wantEnd {
				t.Errorf("lines %d-%d, want %d-%d", hit.StartLine, hit.EndLine, wantLine, wantEnd)
			}
			if hit.Path != tt.path || hit.Commit != "" {
				t.Errorf("path %q commit %q", hit.Path, hit.Commit)
			}
			if fp := fmt.Sprintf("%s:%s:%d", tt.path, hit.RuleID, wantLine); hit.Fingerprint != fp {
				t.Errorf("fingerprint %q, want %q", hit.Fingerprint, fp)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// TestScanPEMCoveredWhole checks that the private-key span is the whole
// block, from BEGIN to END, also with CRLF line ends and on the first line.
func TestScanPEMCoveredWhole(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(11)
	for _, tc := range []struct{ name, before, key, after string }{
		{"lf", "# key\n", f.RSAKey, "\n"},
		{"crlf", "# key\r\n", strings.ReplaceAll(f.RSAKey, "\n", "\r\n"), "\r\n"},
		{"first line no newline", "", f.OpenSSHKey, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content := tc.before + tc.key + tc.after
			fs, err := s.Scan(context.Background(), "id_rsa", []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, x := range fs {
				if x.RuleID != "private-key" {
					continue
				}
				found = true
				got := content[x.Start:x.End]
				if got != tc.key {
					t.Errorf("span %q\nwant %q", got, tc.key)
				}
				if !strings.HasPrefix(got, "-----BEGIN") || !strings.HasSuffix(got, "PRIVATE KEY-----") {
					t.Errorf("span does not cover the block: %q", got)
				}
				if x.StartLine != lineOf(content, len(tc.before)) || x.EndLine != lineOf(content, len(content)-len(tc.after)-1) {
					t.Errorf("lines %d-%d", x.StartLine, x.EndLine)
				}
			}
			if !found {
				t.Fatalf("no private-key finding:%s", describe(content, fs))
			}
		})
	}
}

// TestScanSecretWrappedAsMarker: a text's own `[REDACTED:<secret>]` is no
// redaction marker (only one naming a rule of the scanner is): the secret
// in it is found, as file content and as text that is no file; a real
// marker is not.
func TestScanSecretWrappedAsMarker(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(12)
	for _, text := range []string{
		"token: [REDACTED:" + f.GitHub + "]\n",
		"add [REDACTED:" + f.GitHub + "]",
		"export AWS_ACCESS_KEY_ID=[REDACTED:" + f.AWSKeyID + "]\n",
	} {
		for name, scan := range map[string]func(context.Context, string, []byte) ([]pack.Finding, error){"file": s.Scan, "text": s.ScanText} {
			fs, err := scan(context.Background(), "notes.txt", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) == 0 {
				t.Errorf("%s: no finding in %q", name, text[:20])
			}
		}
	}
	for _, text := range []string{"token: [REDACTED:github-pat]\n", "curl -u \"[REDACTED:curl-auth-user]\" https://x\n", "password = \"[REDACTED:password-assignment]\"\n"} {
		if fs, err := s.Scan(context.Background(), "notes.txt", []byte(text)); err != nil || len(fs) != 0 {
			t.Errorf("a marker is a finding: %v%s", err, describe(text, fs))
		}
	}
}

func TestScanManySecretsOneFile(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(3)
	planted := []string{f.AWSKeyID, f.GitHub, f.Slack, f.Stripe, f.JWT, f.RSAKey, f.DBPassword}
	var b strings.Builder
	b.WriteString("package main\n\nimport \"fmt\"\n\n")
	fmt.Fprintf(&b, "const awsID = %q\n", f.AWSKeyID)
	fmt.Fprintf(&b, "var gh = %q // release bot\n", f.GitHub)
	fmt.Fprintf(&b, "func slack() string { return %q }\n", f.Slack)
	fmt.Fprintf(&b, "var keys = map[string]string{\"stripe\": %q, \"jwt\": %q}\n", f.Stripe, f.JWT)
	fmt.Fprintf(&b, "const pem = `%s`\n", f.RSAKey)
	fmt.Fprintf(&b, "const dsn = \"postgres://app:%s@db/app?sslmode=disable\"\n", f.DBPassword)
	b.WriteString("func main() { fmt.Println(awsID) }\n")
	content := b.String()
	fs, err := s.Scan(context.Background(), "cmd/tool/main.go", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range planted {
		start := strings.Index(content, p)
		ok := false
		for _, x := range fs {
			if x.Start == start && x.End == start+len(p) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%q not found exactly:%s", p[:12], describe(content, fs))
		}
	}
	for i := 1; i < len(fs); i++ {
		if fs[i-1].StartLine > fs[i].StartLine {
			t.Errorf("findings not sorted by line")
		}
	}
}

func TestScanGitleaksAllow(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(5)
	content := "token = \"" + f.GitHub + "\" # gitleaks:allow\n" +
		"other = \"" + f.Stripe + "\"\n" +
		"DB_PASSWORD=" + f.DBPassword + " # gitleaks:allow\n"
	fs, err := s.Scan(context.Background(), "conf/app.env", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].RuleID != "stripe-access-token" || fs[0].StartLine != 2 {
		t.Fatalf("want only the stripe key on line 2, got:%s", describe(content, fs))
	}
}

func TestScanGitleaksIgnore(t *testing.T) {
	dir := t.TempDir()
	f := secrettest.Make(9)
	writeFile(t, filepath.Join(dir, ".gitleaksignore"), strings.Join([]string{
		"# reviewed 2026-10-01",
		`src\main.go:github-pat:2`, // Windows separators are normalized, as in gitleaks
		"config/app.env:password-assignment:3",
		"c0ffee1234567890c0ffee1234567890c0ffee12:lib/x.py:stripe-access-token:10",
		"",
	}, "\n"))
	s, err := NewScanner(ScannerOptions{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.IgnorePath() != filepath.Join(dir, ".gitleaksignore") {
		t.Errorf("IgnorePath %q", s.IgnorePath())
	}
	ctx := context.Background()

	src := "package main\nvar a = \"" + f.GitHub + "\"\nvar b = \"" + f.GitHub + "\"\n"
	fs, _ := s.Scan(ctx, "src/main.go", []byte(src))
	if len(fs) != 1 || fs[0].StartLine != 3 {
		t.Errorf("src/main.go: want only line 3:%s", describe(src, fs))
	}
	env := "APP=web\nDB_USER=app\nDB_PASSWORD=" + f.DBPassword + "\nREDIS_PASSWORD=" + f.DBPassword + "x\n"
	fs, _ = s.Scan(ctx, "config/app.env", []byte(env))
	if len(fs) != 1 || fs[0].StartLine != 4 {
		t.Errorf("config/app.env: want only line 4:%s", describe(env, fs))
	}

	// Commit findings: the commit fingerprint and the global one both apply.
	lines := []pack.Line{{Number: 10, Text: "KEY = '" + f.Stripe + "'"}, {Number: 11, Text: "KEY2 = '" + f.Stripe + "'"}}
	cf, err := s.ScanCommit(ctx, "c0ffee1234567890c0ffee1234567890c0ffee12", "lib/x.py", lines)
	if err != nil {
		t.Fatal(err)
	}
	if len(cf) != 1 || cf[0].StartLine != 11 {
		t.Fatalf("commit: want only line 11, got %+v", cf)
	}
	if want := "c0ffee1234567890c0ffee1234567890c0ffee12:lib/x.py:stripe-access-token:11"; cf[0].Fingerprint != want {
		t.Errorf("fingerprint %q, want %q", cf[0].Fingerprint, want)
	}
	cf, _ = s.ScanCommit(ctx, "d00d", "src/main.go", []pack.Line{{Number: 2, Text: "var a = \"" + f.GitHub + "\""}})
	if len(cf) != 0 {
		t.Errorf("global fingerprint must suppress commit findings too: %+v", cf)
	}
}

// TestIgnoreMatchesGitleaks checks our .gitleaksignore parsing and matching
// against gitleaks' own AddGitleaksIgnore + AddFinding.
func TestIgnoreMatchesGitleaks(t *testing.T) {
	dir := t.TempDir()
	ignore := filepath.Join(dir, ".gitleaksignore")
	writeFile(t, ignore, strings.Join([]string{
		"  # comment", "a/b.go:github-pat:3", `c\d.go:jwt:1`, "abc123:e/f.go:jwt:7",
		`abc123:g\h.go:generic-api-key:2`, "garbage", "x:y", "  i/j.go:aws-access-token:5  ",
	}, "\n"))
	// gitleaks warns about the invalid entries on its global logger.
	saved := logging.Logger
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	defer func() { logging.Logger = saved }()
	d := detect.NewDetector(config.Config{})
	if err := d.AddGitleaksIgnore(ignore); err != nil {
		t.Fatal(err)
	}
	ours, err := loadIgnoreFile(ignore)
	if err != nil {
		t.Fatal(err)
	}
	var cases []report.Finding
	for _, file := range []string{"a/b.go", "c/d.go", "e/f.go", "g/h.go", "i/j.go", "garbage"} {
		for _, rule := range []string{"github-pat", "jwt", "generic-api-key", "aws-access-token"} {
			for _, line := range []int{0, 1, 2, 3, 5, 7} {
				for _, commit := range []string{"", "abc123", "def456"} {
					cases = append(cases, report.Finding{File: file, RuleID: rule, StartLine: line, Commit: commit})
				}
			}
		}
	}
	for _, c := range cases {
		before := len(d.Findings())
		d.AddFinding(c)
		kept := len(d.Findings()) > before
		if kept == ours.ignored(c.Commit, c.File, c.RuleID, c.StartLine) {
			t.Errorf("%s:%s:%s:%d: gitleaks kept=%v, ours ignored=%v", c.Commit, c.File, c.RuleID, c.StartLine, kept, !kept)
		}
		if kept {
			got := d.Findings()[len(d.Findings())-1].Fingerprint
			if want := fingerprint(c.Commit, c.File, c.RuleID, c.StartLine); got != want {
				t.Errorf("fingerprint %q, gitleaks %q", want, got)
			}
		}
	}
}

func TestScanCustomConfig(t *testing.T) {
	f := secrettest.Make(13)
	g := secrettest.NewGen(99)
	internal := "ctx_" + g.Str("abcdefghijklmnopqrstuvwxyz0123456789", 24)
	content := "INTERNAL_TOKEN = '" + internal + "'\ngh = '" + f.GitHub + "'\n"
	rule := `
[[rules]]
id = "ctxpack-internal-token"
description = "internal service token"
regex = '''\b(ctx_[a-z0-9]{24})\b'''
keywords = ["ctx_"]
`
	t.Run("replaces defaults", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, ".gitleaks.toml"), rule)
		s, err := NewScanner(ScannerOptions{RepoRoot: dir})
		if err != nil {
			t.Fatal(err)
		}
		if s.RuleCount() != 1 || s.ConfigPath() != filepath.Join(dir, ".gitleaks.toml") {
			t.Fatalf("RuleCount %d ConfigPath %q", s.RuleCount(), s.ConfigPath())
		}
		fs, _ := s.Scan(context.Background(), "svc/client.py", []byte(content))
		if len(fs) != 1 || fs[0].RuleID != "ctxpack-internal-token" || content[fs[0].Start:fs[0].End] != internal {
			t.Fatalf("want only the custom rule:%s", describe(content, fs))
		}
	})
	t.Run("extend useDefault, repeatedly", func(t *testing.T) {
		dir := t.TempDir()
		cfg := "[extend]\nuseDefault = true\n" + rule + `
[[allowlists]]
targetRules = ["github-pat"]
regexes = ['''` + f.GitHub + `''']
`
		writeFile(t, filepath.Join(dir, "gitleaks.custom.toml"), cfg)
		other := "gh2 = '" + secrettest.Make(14).GitHub + "'\n"
		// gitleaks' global extendDepth counter would drop the targeted
		// allowlist on the 2nd load and the default rules on the 3rd.
		for i := 0; i < 4; i++ {
			s, err := NewScanner(ScannerOptions{ConfigPath: filepath.Join(dir, "gitleaks.custom.toml")})
			if err != nil {
				t.Fatal(err)
			}
			def := newDefaultScanner(t)
			if s.RuleCount() != def.RuleCount()+1 {
				t.Fatalf("load %d: RuleCount %d, want %d", i, s.RuleCount(), def.RuleCount()+1)
			}
			fs, _ := s.Scan(context.Background(), "svc/client.py", []byte(content+other))
			var rules []string
			for _, x := range fs {
				rules = append(rules, x.RuleID)
			}
			if !reflect.DeepEqual(rules, []string{"ctxpack-internal-token", "github-pat"}) || fs[1].StartLine != 3 {
				t.Fatalf("load %d: want custom rule + the non-allowlisted github token on line 3:%s", i, describe(content+other, fs))
			}
			if s.RulesDigest() == def.RulesDigest() {
				t.Fatal("custom rules digest equals default digest")
			}
		}
	})
}

func TestScanBadConfig(t *testing.T) {
	tests := []struct{ name, toml, want string }{
		{"bad rule regex", "[[rules]]\nid = \"broken\"\nregex = '''([a-z'''\n", "error parsing regexp"},
		{"bad allowlist regex", "[[rules]]\nid = \"ok\"\nregex = '''abc'''\n[[rules.allowlists]]\nregexes = ['''[z-a]''']\n", "invalid character class range"},
		{"bad path regex", "[[rules]]\nid = \"p\"\npath = '''*.key'''\n", "missing argument to repetition operator"},
		{"toml syntax", "[[rules]\nid = \"x\"\n", ""},
		{"secret group out of range", "[[rules]]\nid = \"g\"\nregex = '''(a)b'''\nsecretGroup = 3\n", "secret group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".gitleaks.toml")
			writeFile(t, path, tt.toml)
			s, err := NewScanner(ScannerOptions{RepoRoot: dir})
			if err == nil {
				t.Fatalf("no error; %d rules", s.RuleCount())
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
	// After a failed load the next one is unaffected.
	if _, err := NewScanner(ScannerOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewScanner(ScannerOptions{ConfigPath: "/nonexistent/gitleaks.toml"}); err == nil {
		t.Error("missing explicit config: no error")
	}
}

func TestScanDecodedSecret(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(17)
	enc := base64.StdEncoding.EncodeToString([]byte("token: " + f.GitHub + "\n"))
	content := "apiVersion: v1\nkind: ConfigMap\ndata:\n  blob: " + enc + "\n"
	fs, err := s.Scan(context.Background(), "k8s/cm.yaml", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	var hit bool
	for _, x := range fs {
		if x.RuleID == "github-pat" {
			hit = true
			start := strings.Index(content, enc)
			if x.Start < start || x.End > start+len(enc) || x.End-x.Start < len(enc)/2 || x.StartLine != 4 {
				t.Errorf("decoded span %q (L%d) not within the encoded blob", content[x.Start:x.End], x.StartLine)
			}
		}
	}
	if !hit {
		t.Fatalf("base64-encoded token not found:%s", describe(content, fs))
	}
}

// TestGitleaksSpanQuirks: a custom rule whose match begins with '\n' (which
// gitleaks trims without moving the start) and a secretGroup other than the
// first group.
func TestGitleaksSpanQuirks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gitleaks.toml"), `
[[rules]]
id = "newline-led"
regex = '''\nLEAK_[A-Z0-9]{16}'''
[[rules]]
id = "second-group"
regex = '''(user|admin)_key=([a-z0-9]{12})'''
secretGroup = 2
`)
	s, err := NewScanner(ScannerOptions{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	content := "first\nLEAK_\nLEAK_ABCDEFGHIJKLMNOP1234 tail\n  admin_key=abc123def456 user\n"
	fs, err := s.Scan(context.Background(), "x.txt", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	// The span is the whole token the match is part of: no trailing
	// characters of a key are left behind (settleSpan).
	want := map[string]string{"newline-led": "LEAK_ABCDEFGHIJKLMNOP1234", "second-group": "abc123def456"}
	if len(fs) != 2 {
		t.Fatalf("got:%s", describe(content, fs))
	}
	for _, x := range fs {
		if got := content[x.Start:x.End]; got != want[x.RuleID] {
			t.Errorf("%s: span %q, want %q", x.RuleID, got, want[x.RuleID])
		}
	}
}

func TestScanCommit(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(21)
	key := strings.Split(f.RSAKey, "\n")
	var lines []pack.Line
	lines = append(lines, pack.Line{Number: 3, Text: "import os"})
	for i, l := range key { // a PEM block added as lines 10..
		lines = append(lines, pack.Line{Number: 10 + i, Text: l})
	}
	lines = append(lines, pack.Line{Number: 40, Text: "SLACK = \"" + f.Slack + "\""})
	lines = append(lines, pack.Line{Number: 41, Text: "DB_PASSWORD = \"" + f.DBPassword + "\""})
	commit := "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	fs, err := s.ScanCommit(context.Background(), commit, "app/settings.py", lines)
	if err != nil {
		t.Fatal(err)
	}
	text := AddedText(lines)
	want := []struct {
		rule   string
		line   int
		end    int
		secret string
	}{
		{"private-key", 10, 10 + len(key) - 1, f.RSAKey},
		{"slack-bot-token", 40, 40, f.Slack},
		{"", 41, 41, f.DBPassword},
	}
	if len(fs) != len(want) {
		t.Fatalf("got %d findings:%s", len(fs), describe(text, fs))
	}
	for i, w := range want {
		x := fs[i]
		if (w.rule != "" && x.RuleID != w.rule) || x.StartLine != w.line || x.EndLine != w.end || x.Commit != commit {
			t.Errorf("finding %d: %+v, want %s L%d-%d", i, x, w.rule, w.line, w.end)
		}
		if got := text[x.Start:x.End]; got != w.secret {
			t.Errorf("finding %d span %q, want %q", i, got, w.secret)
		}
		if fp := fmt.Sprintf("%s:app/settings.py:%s:%d", commit, x.RuleID, w.line); x.Fingerprint != fp {
			t.Errorf("fingerprint %q, want %q", x.Fingerprint, fp)
		}
	}
	// Order of the input lines does not matter.
	rev := make([]pack.Line, len(lines))
	for i := range lines {
		rev[len(lines)-1-i] = lines[i]
	}
	fs2, _ := s.ScanCommit(context.Background(), commit, "app/settings.py", rev)
	if !reflect.DeepEqual(fs, fs2) {
		t.Error("result depends on line order")
	}
}

func TestScanAllParallelDeterministic(t *testing.T) {
	s := newDefaultScanner(t)
	var items []ScanItem
	for i := 0; i < 64; i++ {
		f := secrettest.Make(uint64(100 + i))
		var content string
		switch i % 4 {
		case 0:
			content = "package p\n\nconst tok = \"" + f.GitHub + "\"\n"
		case 1:
			content = "DB_PASSWORD=" + f.DBPassword + "\nSTRIPE=" + f.Stripe + "\n"
		case 2:
			content = "# nothing here\nx = 1\n"
		case 3:
			content = f.RSAKey + "\n"
		}
		items = append(items, ScanItem{Path: fmt.Sprintf("dir%02d/file%02d.txt", (i*37)%64, i), Content: []byte(content)})
		if i%8 == 0 {
			items = append(items, ScanItem{Path: "hist.py", Commit: fmt.Sprintf("%040x", i), Lines: []pack.Line{{Number: i + 1, Text: "t = '" + f.Slack + "'"}}})
		}
	}
	got, err := s.ScanAll(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	var seq []pack.Finding
	for _, it := range items {
		var fs []pack.Finding
		if it.Commit != "" {
			fs, err = s.ScanCommit(context.Background(), it.Commit, it.Path, it.Lines)
		} else {
			fs, err = s.Scan(context.Background(), it.Path, it.Content)
		}
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, fs...)
	}
	if len(got) != len(seq) || len(got) < 64 {
		t.Fatalf("parallel %d findings, sequential %d", len(got), len(seq))
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Path > b.Path || (a.Path == b.Path && a.StartLine > b.StartLine) {
			t.Fatalf("not sorted at %d: %+v then %+v", i, a, b)
		}
	}
	for i := 0; i < 3; i++ {
		again, err := s.ScanAll(context.Background(), items)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatal("ScanAll is not deterministic")
		}
	}
}

func TestScanCancelled(t *testing.T) {
	s := newDefaultScanner(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Scan(ctx, "a.go", []byte("package a\n")); !errors.Is(err, context.Canceled) {
		t.Errorf("Scan: err %v", err)
	}
	items := []ScanItem{{Path: "a", Content: []byte("x")}, {Path: "b", Content: []byte("y")}}
	if _, err := s.ScanAll(ctx, items); !errors.Is(err, context.Canceled) {
		t.Errorf("ScanAll: err %v", err)
	}
}

// TestScanDefaultAllowlistPathsDropped: gitleaks' default config allowlists
// lockfiles, go.mod, wrapper scripts, vendored scripts and node_modules by
// path; what leaves is scanned whatever its name, by gitleaks' rules and
// ctxpack's alike (class 1 of issue 13). A repository's own path allowlist
// still applies.
func TestScanDefaultAllowlistPathsDropped(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(23)
	content := "password = \"" + f.DBPassword + "\"\ntoken = \"" + f.GitHub + "\"\n"
	for _, p := range []string{"package-lock.json", "web/yarn.lock", "poetry.lock", "Pipfile.lock", "go.mod", "go.sum",
		"gradlew", "mvnw.cmd", "static/jquery-3.7.1.min.js", "assets/bootstrap.bundle.js", "node_modules/x/index.js",
		"gitleaks.toml", "docs/logo.svg", "vendor/modules.txt"} {
		fs, err := s.Scan(context.Background(), p, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		rules := map[string]bool{}
		for _, x := range fs {
			rules[x.RuleID] = true
		}
		if !rules["github-pat"] || !rules[RulePasswordAssignment] && !rules["generic-api-key"] {
			t.Errorf("%s: want the token and the password:%s", p, describe(content, fs))
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gitleaks.toml"), "[extend]\nuseDefault = true\n[allowlist]\npaths = ['''^fixtures/''']\n")
	own, err := NewScanner(ScannerOptions{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := own.Scan(context.Background(), "fixtures/keys.txt", []byte(content)); err != nil || len(fs) != 0 {
		t.Errorf("the repository's own path allowlist: %v%s", err, describe(content, fs))
	}
	if fs, _ := own.Scan(context.Background(), "package-lock.json", []byte(content)); len(fs) == 0 {
		t.Error("a config extending the default rules brings back the default path allowlist")
	}
	// The rest of the default global allowlist (values) still applies.
	ref := "token = \"${{ secrets.DEPLOY_TOKEN }}\"\n"
	if fs, _ := s.Scan(context.Background(), ".github/workflows/ci.yml", []byte(ref)); len(fs) != 0 {
		t.Errorf("workflow expression:%s", describe(ref, fs))
	}
}

func TestScannerMetadata(t *testing.T) {
	s := newDefaultScanner(t)
	if s.Version() != "v8.30.1" {
		t.Errorf("Version %q", s.Version())
	}
	if s.RuleCount() < 200 {
		t.Errorf("RuleCount %d", s.RuleCount())
	}
	s2, err := NewScanner(ScannerOptions{RepoRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if d := s.RulesDigest(); len(d) != 64 || d != s2.RulesDigest() {
		t.Errorf("RulesDigest not stable: %q vs %q", d, s2.RulesDigest())
	}
	if s2.ConfigPath() != "" || s2.IgnorePath() != "" {
		t.Errorf("paths %q %q", s2.ConfigPath(), s2.IgnorePath())
	}
}

// TestScanConcurrentDetector hammers one Scanner from many goroutines (run
// with -race) including the decode path, which appends to rule tags.
func TestScanConcurrentDetector(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(31)
	enc := base64.StdEncoding.EncodeToString([]byte("key=" + f.GitHub))
	content := []byte("a: " + enc + "\nb: '" + f.Stripe + "'\n" + f.RSAKey + "\n")
	want, err := s.Scan(context.Background(), "c.yaml", content)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4*runtime.NumCPU(); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				got, err := s.Scan(context.Background(), "c.yaml", content)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("concurrent scan differs: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRuleTagsClipped: Detect appends decode tags to rule.Tags; with spare
// capacity (as [extend] merging leaves) concurrent scans would share memory.
func TestRuleTagsClipped(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "base.toml"), `
[[rules]]
id = "internal-token"
regex = '''itk_[a-z0-9]{20}'''
keywords = ["itk_"]
tags = ["team-a", "rotate"]
`)
	// A relative [extend] path is resolved against the repository root.
	writeFile(t, filepath.Join(dir, ".gitleaks.toml"), `
[extend]
path = "base.toml"
[[rules]]
id = "internal-token"
tags = ["prod"]
`)
	s, err := NewScanner(ScannerOptions{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range s.rules.full().Rules {
		if cap(r.Tags) != len(r.Tags) {
			t.Errorf("rule %s: tags len %d cap %d", id, len(r.Tags), cap(r.Tags))
		}
	}
	if got := s.rules.rule("internal-token").Tags; len(got) != 3 {
		t.Errorf("tags %q", got)
	}
	content := "x = itk_abcdefghij0123456789\n"
	if fs, _ := s.Scan(context.Background(), "a.py", []byte(content)); len(fs) != 1 || fs[0].RuleID != "internal-token" {
		t.Errorf("extended rule not applied:%s", describe(content, fs))
	}
}

// TestScanPathOnlyRule: gitleaks' path-only rules (pkcs12-file) report the
// file itself, with line 0 as gitleaks does; the span is the whole content.
func TestScanPathOnlyRule(t *testing.T) {
	s := newDefaultScanner(t)
	content := []byte("0\x82\x0b\x91\x02\x01\x030\x82\x0bW\x06\t*\x86H\x86\xf7\r\x01\x07\x01")
	fs, err := s.Scan(context.Background(), "certs/client.p12", content)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].RuleID != "pkcs12-file" || fs[0].StartLine != 0 || fs[0].Start != 0 || fs[0].End != len(content) ||
		fs[0].Fingerprint != "certs/client.p12:pkcs12-file:0" {
		t.Fatalf("got %+v", fs)
	}
	lines := []pack.Line{{Number: 1, Text: "a"}, {Number: 5, Text: "b"}}
	cf, err := s.ScanCommit(context.Background(), "abc1234", "certs/client.p12", lines)
	if err != nil {
		t.Fatal(err)
	}
	if len(cf) != 1 || cf[0].StartLine != 0 || cf[0].End != len(AddedText(lines)) || cf[0].Fingerprint != "abc1234:certs/client.p12:pkcs12-file:0" {
		t.Fatalf("commit: got %+v", cf)
	}
}

// TestGitleaksSpanEqualsSecret: for every gitleaks finding over a varied
// corpus (LF and CRLF, secrets at line starts, ends and file ends), the span
// we compute holds exactly gitleaks' Secret.
func TestGitleaksSpanEqualsSecret(t *testing.T) {
	s := newDefaultScanner(t)
	var texts []string
	for _, it := range benchCorpus(256 << 10) {
		texts = append(texts, string(it.Content))
	}
	for seed := uint64(0); seed < 20; seed++ {
		f := secrettest.Make(seed)
		vals := []string{f.AWSKeyID, f.GitHub, f.Slack, f.Stripe, f.JWT, f.RSAKey, f.OpenSSHKey,
			"api_key = \"" + f.APIKey + "\"", "aws_secret_access_key=" + f.AWSSecret}
		v := vals[seed%uint64(len(vals))]
		w := vals[(seed+3)%uint64(len(vals))]
		texts = append(texts, v, v+"\n", "x\n"+v, "\n\n"+v+"\n"+w, "a = '"+v+"' # c\r\nb: "+w+"\r\n")
	}
	checked := 0
	for _, text := range texts {
		li := newLineIndex(text)
		//lint:ignore SA1019 v8's DetectContext takes detect.Fragment
		for _, f := range s.stock().DetectContext(context.Background(), detect.Fragment{Raw: text, FilePath: "f.txt", StartLine: 1}) {
			if isDecoded(f) || f.StartLine == 0 {
				continue
			}
			start, end := gitleaksSpan(li, f, s.rules.rule(f.RuleID))
			if got := text[start:end]; got != f.Secret {
				t.Errorf("%s L%d col %d-%d: span %q, secret %q", f.RuleID, f.StartLine, f.StartColumn, f.EndColumn, got, f.Secret)
			}
			if li.lineOf(start) < f.StartLine {
				t.Errorf("%s: span starts on line %d before the finding's line %d", f.RuleID, li.lineOf(start), f.StartLine)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Fatalf("only %d findings checked", checked)
	}
	t.Logf("%d findings checked", checked)
}

// TestRedactedTextScansClean: replacing every span with [REDACTED:<rule>]
// (what pack does) leaves nothing for a rescan to find — the builder's
// rescan loop and the audit rely on it.
func TestRedactedTextScansClean(t *testing.T) {
	s := newDefaultScanner(t)
	f := secrettest.Make(51)
	files := map[string]string{
		".env":            "DB_PASSWORD=" + f.DBPassword + "\nAPI_KEY=" + f.APIKey + "\nDATABASE_URL=postgres://app:" + f.DBPassword + "@db/app\n",
		"config/app.yaml": "password: " + f.DBPassword + "\nclient_secret: \"" + f.APIKey + "\"\nurl: https://api.internal/v1?token=" + f.DBPassword + "\n",
		"src/main.go": "package main\nconst gh = \"" + f.GitHub + "\"\nvar slack = `" + f.Slack + "`\nconst key = `" + f.RSAKey + "`\n" +
			"var jwt = \"" + f.JWT + "\"\nvar stripe = \"" + f.Stripe + "\"\npassword := \"" + f.DBPassword + "\"\n",
		"conf/settings.xml": "<password>" + f.DBPassword + "</password>\n<add key=\"ApiKey\" value=\"" + f.APIKey + "\"/>\n",
		".aws/credentials":  "[default]\naws_access_key_id = " + f.AWSKeyID + "\naws_secret_access_key = " + f.AWSSecret + "\n",
	}
	for path, content := range files {
		fs, err := s.Scan(context.Background(), path, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) == 0 {
			t.Fatalf("%s: nothing found", path)
		}
		// replace last-first; spans of different rules may coincide
		red := content
		last := len(red) + 1
		for i := len(fs) - 1; i >= 0; i-- {
			x := fs[i]
			if x.End > last {
				continue
			}
			red = red[:x.Start] + "[REDACTED:" + x.RuleID + "]" + red[x.End:]
			last = x.Start
		}
		again, err := s.Scan(context.Background(), path, []byte(red))
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != 0 {
			t.Errorf("%s: redacted text still has findings:%s\n%s", path, describe(red, again), red)
		}
	}
}
