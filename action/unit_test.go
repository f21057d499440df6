package action

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/google/go-github/v60/github"
)

func TestBackoffMatchesToolkit(t *testing.T) {
	for n, want := range map[int][2]time.Duration{
		1: {3000 * time.Millisecond, 4500 * time.Millisecond},
		2: {4500 * time.Millisecond, 6750 * time.Millisecond},
		4: {10125 * time.Millisecond, 15187500 * time.Microsecond},
	} {
		if got := backoff(n, 0); got != want[0] {
			t.Errorf("backoff(%d, 0) = %v, want %v", n, got, want[0])
		}
		if got := backoff(n, 0.999999); got < want[0] || got >= want[1] {
			t.Errorf("backoff(%d, ~1) = %v, want in [%v, %v)", n, got, want[0], want[1])
		}
	}
}

func TestRetrier(t *testing.T) {
	s := &fakeSleep{}
	r := &retrier{sleep: s.sleep, rand: func() float64 { return 0 }}
	calls := 0
	err := r.do(context.Background(), "op", func(int) error { calls++; return retryErr(errors.New("boom")) })
	if calls != 5 || len(s.all()) != 4 || err == nil || !strings.Contains(err.Error(), "failed after 5 attempts: boom") {
		t.Fatalf("calls %d waits %v err %v", calls, s.all(), err)
	}
	calls = 0
	err = r.do(context.Background(), "op", func(int) error { calls++; return errors.New("final") })
	if calls != 1 || err.Error() != "final" {
		t.Fatalf("non-retryable: calls %d err %v", calls, err)
	}
	// A server-requested wait is honoured, a too-long one is not waited for.
	s2 := &fakeSleep{}
	r2 := &retrier{sleep: s2.sleep, maxWait: time.Minute}
	calls = 0
	err = r2.do(context.Background(), "op", func(int) error {
		calls++
		if calls == 1 {
			return &retryable{err: errors.New("slow down"), after: 7 * time.Second}
		}
		if calls == 2 {
			return &retryable{err: errors.New("later"), after: time.Hour}
		}
		return nil
	})
	if calls != 2 || len(s2.all()) != 1 || s2.all()[0] != 7*time.Second || err == nil || !strings.Contains(err.Error(), "asked to wait 1h0m0s") {
		t.Fatalf("calls %d waits %v err %v", calls, s2.all(), err)
	}
	// A cancelled context stops the loop.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	err = r.do(ctx, "op", func(int) error { calls++; return retryErr(errors.New("x")) })
	if calls != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("calls %d err %v", calls, err)
	}
}

func TestRetryTransport(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var n atomic.Int32
	var bodies []string
	script := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) },
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		},
		func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(now.Add(20*time.Second).Unix()))
			w.WriteHeader(http.StatusForbidden)
		},
		func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`)
		},
		func(w http.ResponseWriter) { io.WriteString(w, "ok") },
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		script[n.Add(1)-1](w)
	}))
	defer srv.Close()
	s := &fakeSleep{}
	rt := &retryTransport{base: http.DefaultTransport, retry: &retrier{sleep: s.sleep, rand: func() float64 { return 0 }}, now: func() time.Time { return now }}
	c := &http.Client{Transport: rt}
	req, _ := http.NewRequest(http.MethodPatch, srv.URL, strings.NewReader(`{"body":"x"}`))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("status %d body %q", res.StatusCode, b)
	}
	want := []time.Duration{3 * time.Second, 3 * time.Second, 21 * time.Second, time.Minute}
	if fmt.Sprint(s.all()) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", s.all(), want)
	}
	for i, body := range bodies {
		if body != `{"body":"x"}` {
			t.Fatalf("attempt %d body %q: not replayed", i+1, body)
		}
	}

	// A POST answered 5xx may have been acted on: it is not repeated
	// here (upsertComment lists before it posts again); a rate limit, which
	// refuses before acting, is.
	n.Store(0)
	bodies, s.waits = nil, nil
	if res, err = c.Post(srv.URL, "application/json", strings.NewReader(`{"body":"x"}`)); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway || len(bodies) != 1 || len(s.all()) != 0 {
		t.Fatalf("POST 502: status %d, %d attempts, waits %v", res.StatusCode, len(bodies), s.all())
	}
	if res, err = c.Post(srv.URL, "application/json", strings.NewReader(`{"body":"x"}`)); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || len(bodies) != 5 {
		t.Fatalf("POST after rate limits: status %d, %d attempts", res.StatusCode, len(bodies))
	}

	// A permission 403 is final and its body still readable.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"message":"Resource not accessible by integration"}`)
	}))
	defer srv2.Close()
	s.waits = nil
	res, err = c.Get(srv2.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	if res.StatusCode != 403 || !strings.Contains(string(b), "not accessible") || len(s.all()) != 0 {
		t.Fatalf("status %d body %q waits %v", res.StatusCode, b, s.all())
	}

	// 5xx forever: five attempts, then the last answer.
	var m atomic.Int32
	srv3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv3.Close()
	res, err = c.Get(srv3.URL)
	if err != nil || res.StatusCode != 503 || m.Load() != 5 {
		t.Fatalf("err %v status %v attempts %d", err, res.StatusCode, m.Load())
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}
	if d := retryAfter(h, now); d != 90*time.Second {
		t.Fatalf("got %v", d)
	}
	if d := retryAfter(http.Header{"Retry-After": {"soon"}}, now); d != 0 {
		t.Fatalf("got %v", d)
	}
}

func TestBackendIDs(t *testing.T) {
	run, job, err := BackendIDs(runtimeToken())
	if err != nil || run != "run-backend-1" || job != "job-backend-2" {
		t.Fatalf("%q %q %v", run, job, err)
	}
	enc := func(s string) string {
		return "e30." + base64.RawURLEncoding.EncodeToString([]byte(s)) + ".sig"
	}
	for token, want := range map[string]string{
		"abc":                                  "not a JWT",
		"a.!!!.c":                              "not base64url",
		enc(`[`):                               "not JSON",
		enc(`{"scp":"Actions.GenericRead"}`):   "no Actions.Results scope",
		enc(`{"scp":"Actions.Results:only"}`):  "malformed scope",
		enc(`{"scp":"Actions.Results:a:b:c"}`): "malformed scope",
	} {
		if _, _, err := BackendIDs(token); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", token, err, want)
		}
	}
}

func TestValidateArtifactName(t *testing.T) {
	if err := ValidateArtifactName("ctxpack-abc1234 (linux)"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", `a"b`, "a:b", "a<b", "a>b", "a|b", "a*b", "a?b", "a\rb", "a\nb", `a\b`, "a/b"} {
		if err := ValidateArtifactName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%q: the error spans lines", bad)
		}
	}
}

func TestRedaction(t *testing.T) {
	u := "https://blob.example/c/a.zip?sv=1&sig=SECRET%2Bsig&se=2"
	if got := redactURL(u); strings.Contains(got, "SECRET") || !strings.Contains(got, "sig=%2A%2A%2A") {
		t.Fatalf("redactURL = %q", got)
	}
	if got := redactText("PUT " + u + ": EOF"); strings.Contains(got, "SECRET") {
		t.Fatalf("redactText = %q", got)
	}
	// net/http's errors carry the full URL; redactErr strips it.
	_, err := (&http.Client{}).Get("http://127.0.0.1:1/x?sig=SECRET")
	if err == nil {
		t.Fatal("want a connection error")
	}
	if got := redactErr(err).Error(); strings.Contains(got, "SECRET") {
		t.Fatalf("redactErr = %q", got)
	}
	if redactErr(nil) != nil {
		t.Fatal("nil")
	}
	if got := oneLine("a\nb\r\x1b[31m\u2028"); got != `a\nb\r\u001B[31m\u2028` {
		t.Fatalf("oneLine = %q", got)
	}
}

func TestPlanFor(t *testing.T) {
	a := strings.Repeat("a", 40)
	b := strings.Repeat("b", 40)
	ev := func(s string) *Event {
		e, err := ParseEvent([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tests := []struct {
		name, event, payload, sha string
		kind, base, head, err     string
		pr                        int
		fork                      bool
	}{
		{name: "push", event: "push", payload: `{"ref":"refs/heads/main","before":"` + a + `","after":"` + b + `","commits":[],"head_commit":null}`, kind: PlanRange, base: a, head: b},
		{name: "new branch", event: "push", payload: `{"ref":"refs/heads/x","before":"` + zeroSHA + `","after":"` + b + `","created":true,"repository":{"default_branch":"main"}}`, kind: PlanNewBranch, head: b},
		{name: "deleted", event: "push", payload: `{"ref":"refs/heads/x","before":"` + a + `","after":"` + zeroSHA + `","deleted":true,"head_commit":null,"commits":[]}`, kind: PlanSkip},
		{name: "tag", event: "push", payload: `{"ref":"refs/tags/v1","before":"` + zeroSHA + `","after":"` + b + `","created":true}`, kind: PlanCommit, head: b},
		{name: "pr", event: "pull_request", sha: strings.Repeat("c", 40), payload: `{"number":3,"pull_request":{"number":3,"base":{"sha":"` + a + `","repo":{"full_name":"o/r"}},"head":{"sha":"` + b + `","repo":{"full_name":"o/r"}}}}`, kind: PlanRange, base: a, head: b, pr: 3},
		{name: "fork", event: "pull_request_target", payload: `{"number":4,"pull_request":{"number":4,"base":{"sha":"` + a + `","repo":{"full_name":"o/r"}},"head":{"sha":"` + b + `","repo":{"full_name":"f/r"}}}}`, kind: PlanRange, base: a, head: b, pr: 4, fork: true},
		{name: "deleted fork", event: "pull_request", payload: `{"number":5,"pull_request":{"number":5,"base":{"sha":"` + a + `","repo":{"full_name":"o/r"}},"head":{"sha":"` + b + `","repo":null}}}`, kind: PlanRange, base: a, head: b, pr: 5, fork: true},
		{name: "dispatch", event: "workflow_dispatch", sha: b, payload: `{}`, kind: PlanCommit, head: b},
		{name: "schedule", event: "schedule", sha: b, payload: `{"schedule":"* * * * *"}`, kind: PlanCommit, head: b},
		{name: "merge group", event: "merge_group", sha: b, payload: `{"merge_group":{"head_sha":"` + b + `","base_sha":"` + a + `"}}`, kind: PlanRange, base: a, head: b},
		{name: "merge group without sha", event: "merge_group", payload: `{"merge_group":{"head_sha":"` + b + `"}}`, kind: PlanCommit, head: b},
		{name: "force push", event: "push", payload: `{"ref":"refs/heads/x","before":"` + a + `","after":"` + b + `","forced":true,"repository":{"default_branch":"main"}}`, kind: PlanNewBranch, head: b},
		{name: "review", event: "pull_request_review", sha: strings.Repeat("c", 40), payload: `{"review":{},"pull_request":{"number":6,"base":{"sha":"` + a + `","repo":{"full_name":"o/r"}},"head":{"sha":"` + b + `","repo":{"full_name":"o/r"}}}}`, kind: PlanRange, base: a, head: b, pr: 6},
		{name: "review comment", event: "pull_request_review_comment", payload: `{"comment":{},"pull_request":{"number":7,"base":{"sha":"` + a + `","repo":{"full_name":"o/r"}},"head":{"sha":"` + b + `","repo":{"full_name":"o/r"}}}}`, kind: PlanRange, base: a, head: b, pr: 7},
		{name: "workflow_run of a pull request", event: "workflow_run", sha: a, payload: `{"workflow_run":{"head_sha":"` + b + `","head_branch":"f","pull_requests":[{"number":8,"head":{"sha":"` + b + `"},"base":{"sha":"` + a + `"}}]}}`, kind: PlanRange, base: a, head: b, pr: 8},
		{name: "workflow_run of a push", event: "workflow_run", sha: a, payload: `{"workflow_run":{"head_sha":"` + b + `","head_branch":"f","pull_requests":[]},"repository":{"default_branch":"main"}}`, kind: PlanNewBranch, head: b},
		{name: "workflow_run without an object", event: "workflow_run", sha: a, payload: `{}`, err: "no workflow_run object"},
		{name: "check_suite", event: "check_suite", payload: `{"check_suite":{"head_sha":"` + b + `","pull_requests":[{"number":9,"base":{"sha":"` + a + `"}}]}}`, kind: PlanRange, base: a, head: b, pr: 9},
		{name: "comment on a pull request", event: "issue_comment", sha: a, payload: `{"issue":{"number":10,"pull_request":{}}}`, kind: PlanPullNumber, pr: 10},
		{name: "comment on an issue", event: "issue_comment", sha: a, payload: `{"issue":{"number":11}}`, kind: PlanCommit, head: a},
		{name: "branch created", event: "create", sha: b, payload: `{"ref":"f","ref_type":"branch","repository":{"default_branch":"main"}}`, kind: PlanNewBranch, head: b},
		{name: "tag created", event: "create", sha: b, payload: `{"ref":"v1","ref_type":"tag"}`, kind: PlanCommit, head: b},
		{name: "delete", event: "delete", sha: a, payload: `{"ref":"f","ref_type":"branch"}`, kind: PlanSkip},
		{name: "deployment", event: "deployment", sha: a, payload: `{"deployment":{"sha":"` + b + `"}}`, kind: PlanCommit, head: b},
		{name: "status", event: "status", sha: a, payload: `{"sha":"` + b + `"}`, kind: PlanCommit, head: b},
		{name: "merge group bad base", event: "merge_group", payload: `{"merge_group":{"head_sha":"` + b + `","base_sha":"nope"}}`, err: "merge_group.base_sha"},
		{name: "no sha", event: "workflow_dispatch", payload: `{}`, err: "GITHUB_SHA is not set"},
		{name: "no name", event: "", payload: `{}`, err: "GITHUB_EVENT_NAME is not set"},
		{name: "pr without object", event: "pull_request", payload: `{"number":1}`, err: "no pull_request object"},
		{name: "bad sha", event: "push", payload: `{"ref":"refs/heads/main","before":"` + a + `","after":"HEAD; rm -rf /"}`, err: "is not a commit id"},
		{name: "no after", event: "push", payload: `{"ref":"refs/heads/main"}`, err: "no \"after\" commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := PlanFor(tt.event, ev(tt.payload), tt.sha)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != tt.kind || p.Base != tt.base || p.Head != tt.head || p.PR != tt.pr || p.Fork != tt.fork {
				t.Fatalf("plan %+v", p)
			}
		})
	}
	if _, err := PlanFor("push", nil, ""); err == nil {
		t.Fatal("nil event")
	}
}

func TestReadEvent(t *testing.T) {
	if _, err := ReadEvent(""); err == nil {
		t.Fatal("empty path")
	}
	dir := t.TempDir()
	if _, err := ReadEvent(dir); err == nil {
		t.Fatal("a directory")
	}
	f := filepath.Join(dir, "e.json")
	os.WriteFile(f, []byte(`"a string"`), 0o644)
	if _, err := ReadEvent(f); err == nil {
		t.Fatal("not an object")
	}
}

func TestReadInputs(t *testing.T) {
	in, err := readInputs(func(string) string { return "" })
	if err != nil || !in.Comment || !in.FailOnViolation || in.SARIF || in.RetentionDays != 0 {
		t.Fatalf("defaults %+v %v", in, err)
	}
	vals := map[string]string{"comment": "FALSE", "sarif": "True", "fail-on-violation": "false", "type": "Summary", "tier": "cheap", "secrets-action": "exclude", "retention-days": "30"}
	in, err = readInputs(func(k string) string { return vals[k] })
	if err != nil || in.Comment || !in.SARIF || in.FailOnViolation || in.Type != "summary" || in.RetentionDays != 30 {
		t.Fatalf("%+v %v", in, err)
	}
	for k, v := range map[string]string{"sarif": "1", "tier": "huge", "secrets-action": "ignore", "retention-days": "x", "artifact-name": "a:b"} {
		if _, err := readInputs(func(n string) string {
			if n == k {
				return v
			}
			return ""
		}); err == nil {
			t.Errorf("%s=%q accepted", k, v)
		}
	}
}

func TestSARIF(t *testing.T) {
	v := audit.NewVerdict()
	v.Fail(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInHistory, Message: "commit adds a secret",
		Details: map[string]any{"path": "dir/a file#1.go", "line": 3, "fingerprint": "abc:dir/a file#1.go:github-pat:3"}})
	v.Warn(audit.Check{Kind: audit.KindSecret, Code: audit.CodeSecretInContext, Message: "redacted", Details: map[string]any{"path": "b.go", "line": float64(2)}})
	v.Skip(audit.Check{Kind: audit.KindSecret, Code: audit.CodeHistoryUnavailable, Message: "shallow"})
	v.Fail(audit.Check{Kind: audit.KindPolicy, Code: "custom_code", Message: "other"})
	data, err := SARIF(v, "1.2.3", "sub", "")
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "ctxpack" {
		t.Fatalf("%s", data)
	}
	rs := log.Runs[0].Results
	if len(rs) != 4 || len(log.Runs[0].Tool.Driver.Rules) != 4 {
		t.Fatalf("%s", data)
	}
	for _, r := range rs {
		if log.Runs[0].Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Fatalf("rule index of %s", r.RuleID)
		}
		switch r.RuleID {
		case audit.CodeSecretInHistory:
			loc := r.Locations[0].PhysicalLocation
			if r.Level != "error" || loc.ArtifactLocation.URI != "sub/dir/a%20file%231.go" || loc.Region.StartLine != 3 || r.PartialFingerprints["ctxpackFinding/v1"] == "" {
				t.Fatalf("%+v", r)
			}
		case audit.CodeSecretInContext:
			if r.Level != "warning" || r.Locations[0].PhysicalLocation.Region.StartLine != 2 {
				t.Fatalf("%+v", r)
			}
		case audit.CodeHistoryUnavailable, "custom_code":
			// Code scanning rejects the file for one result without a
			// location: repository-level checks point at the policy.
			if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "sub/.ctxpack.yml" || r.Locations[0].PhysicalLocation.Region != nil {
				t.Fatalf("%+v", r)
			}
		}
		if len(r.Locations) == 0 {
			t.Fatalf("%s has no location", r.RuleID)
		}
	}
}

func TestReporterDegrades(t *testing.T) {
	var out bytes.Buffer
	env := map[string]string{}
	r := newReporter(func(k string) string { return env[k] }, &out)
	r.setOutputs([][2]string{{"a", "1"}})
	if r.stepSummary("# hi") {
		t.Fatal("summary written without GITHUB_STEP_SUMMARY")
	}
	if !strings.Contains(out.String(), "GITHUB_OUTPUT is not set") || !strings.Contains(out.String(), "a=1") {
		t.Fatalf("%s", out.String())
	}
	// An unwritable file is a warning, not a panic.
	env["GITHUB_STEP_SUMMARY"] = filepath.Join(t.TempDir(), "no", "such", "dir")
	env["GITHUB_OUTPUT"] = env["GITHUB_STEP_SUMMARY"]
	out.Reset()
	if r.stepSummary("# hi") {
		t.Fatal("reported success")
	}
	r.setOutputs([][2]string{{"a", "1"}})
	if strings.Count(out.String(), "::warning::could not write") != 2 {
		t.Fatalf("%s", out.String())
	}
	// A value spanning lines (or holding the delimiter) is refused.
	env["GITHUB_OUTPUT"] = filepath.Join(t.TempDir(), "out")
	out.Reset()
	r.setOutputs([][2]string{{"a", "x\ny"}, {"b", "_GitHubActionsFileCommandDelimeter_"}, {"c", "ok"}})
	data, _ := os.ReadFile(env["GITHUB_OUTPUT"])
	if strings.Contains(string(data), "a<<") || strings.Contains(string(data), "b<<") || !strings.Contains(string(data), "c<<") {
		t.Fatalf("%q", data)
	}
	// Annotations are capped.
	out.Reset()
	for i := 0; i < maxAnnotations+3; i++ {
		r.annotate("warning", "f.go", i, "t", "m")
	}
	r.flushAnnotations()
	if n := strings.Count(out.String(), "::warning file=f.go"); n != maxAnnotations || !strings.Contains(out.String(), "3 more findings") {
		t.Fatalf("%d annotations\n%s", n, out.String())
	}
	// Log lines cannot start a workflow command.
	out.Reset()
	r.infof("name %s", "x\n::set-output name=a::b")
	if strings.Contains(out.String(), "\n::set-output") {
		t.Fatalf("%q", out.String())
	}
}

func TestArtifactClientResponses(t *testing.T) {
	s := &fakeSleep{}
	var step atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch step.Add(1) {
		case 1:
			io.WriteString(w, "<html>proxy</html>") // 200, not JSON: retried
		case 2:
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"code":"permission_denied","msg":"insufficient usage to create artifact"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":"invalid_argument","msg":"see https://x.example/?sig=LEAK"}`)
		}
	}))
	defer srv.Close()
	c := &ArtifactClient{HTTP: srv.Client(), Origin: srv.URL, token: "t", RunID: "r", JobID: "j", Retry: &retrier{sleep: s.sleep}}
	_, err := c.Upload(context.Background(), "n", []byte("zip"), nil)
	var ue *UsageError
	if !errors.As(err, &ue) || len(s.all()) != 1 {
		t.Fatalf("err %v waits %v", err, s.all())
	}
	_, err = c.Upload(context.Background(), "n", []byte("zip"), nil)
	var te *TwirpError
	if !errors.As(err, &te) || te.Status != 400 || strings.Contains(err.Error(), "LEAK") || len(s.all()) != 1 {
		t.Fatalf("err %v waits %v", err, s.all())
	}
	if _, err := c.Upload(context.Background(), "bad/name", nil, nil); err == nil {
		t.Fatal("bad name uploaded")
	}
}

func TestNewArtifactClientEnvironment(t *testing.T) {
	r := &retrier{}
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if _, err := NewArtifactClient(get, http.DefaultClient, r); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("err %v", err)
	}
	env["ACTIONS_RUNTIME_TOKEN"] = runtimeToken()
	env["ACTIONS_RESULTS_URL"] = "https://results-receiver.actions.githubusercontent.com/some/path"
	env["GITHUB_SERVER_URL"] = "https://ghes.example.com"
	if _, err := NewArtifactClient(get, http.DefaultClient, r); !errors.Is(err, ErrNoRuntime) {
		t.Fatalf("GHES: err %v", err)
	}
	env["GITHUB_SERVER_URL"] = "https://octo.ghe.com"
	c, err := NewArtifactClient(get, http.DefaultClient, r)
	if err != nil || c.Origin != "https://results-receiver.actions.githubusercontent.com" {
		t.Fatalf("%v %+v", err, c)
	}
	env["ACTIONS_RESULTS_URL"] = "::nope"
	if _, err := NewArtifactClient(get, http.DefaultClient, r); err == nil || errors.Is(err, ErrNoRuntime) {
		t.Fatalf("err %v", err)
	}
}

func TestStringField(t *testing.T) {
	var m map[string]json.RawMessage
	json.Unmarshal([]byte(`{"a":"1","b":2,"c":true}`), &m)
	if v, ok := stringField(m, "x", "a"); !ok || v != "1" {
		t.Fatal(v)
	}
	if v, ok := stringField(m, "b"); !ok || v != "2" {
		t.Fatal(v)
	}
	if _, ok := stringField(m, "c"); ok {
		t.Fatal("bool as string")
	}
	if _, ok := boolField(m, "a"); ok {
		t.Fatal("string as bool")
	}
}

func TestZipIsDeterministic(t *testing.T) {
	files := []zipFile{{"b.json", []byte("b")}, {"a.json", []byte("a")}}
	x, err := zipFiles(files, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := zipFiles([]zipFile{files[1], files[0]}, time.Time{})
	if !bytes.Equal(x, y) {
		t.Fatal("zip depends on input order")
	}
}

func TestChangeFromAPIStatuses(t *testing.T) {
	str := func(s string) *string { return &s }
	for status, want := range map[string]string{"added": "added", "copied": "added", "removed": "deleted", "renamed": "renamed", "modified": "modified", "changed": "modified", "unchanged": ""} {
		ch, ok := changeFromAPI(&github.CommitFile{Filename: str("p"), Status: str(status), PreviousFilename: str("old"), Patch: str("@@ -1 +1 @@\n-a\n+b")})
		if (want == "") == ok || (ok && ch.Status != want) {
			t.Errorf("%s: %+v %v", status, ch, ok)
		}
		if ok && status == "renamed" && (ch.OldPath != "old" || !strings.HasPrefix(ch.Diff, "diff --git a/old b/p\n--- a/old\n+++ b/p\n@@")) {
			t.Errorf("renamed: %+v", ch)
		}
		if ok && status == "added" && !strings.Contains(ch.Diff, "--- /dev/null\n") {
			t.Errorf("added: %q", ch.Diff)
		}
	}
}
