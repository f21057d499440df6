package action

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// request is one request a fake server received.
type request struct {
	Method, URL string
	Header      http.Header
	Body        []byte
}

// recorder keeps every request a fake server received, to check that no
// secret reached a server.
type recorder struct {
	mu   sync.Mutex
	reqs []request
}

func (rc *recorder) record(r *http.Request) []byte {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, request{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: body})
	rc.mu.Unlock()
	return body
}

func (rc *recorder) all() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.reqs...)
}

// fakeSig is the signed URL's signature; it must never be logged.
const fakeSig = "Zm9vYmFyLXNpZ25hdHVyZS0xMjM0NQ=="

// fakeArtifacts implements the artifact Twirp service and the blob storage
// it hands out signed URLs for (Put Block, Put Block List).
type fakeArtifacts struct {
	t   *testing.T
	srv *httptest.Server
	recorder
	token string // expected bearer token

	mu        sync.Mutex
	fail      map[string][]int // method → statuses to answer before succeeding
	calls     map[string]int
	camel     bool // answer with camelCase field names
	name      string
	expiresAt string
	blocks    map[string][]byte
	blockIDs  []string
	blob      []byte
	committed bool
	size      string
	hash      string
	createReq map[string]any
}

func newFakeArtifacts(t *testing.T, token string) *fakeArtifacts {
	f := &fakeArtifacts{t: t, token: token, fail: map[string][]int{}, calls: map[string]int{}, blocks: map[string][]byte{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// injected returns the next injected failure status for key, 0 for none.
func (f *fakeArtifacts) injected(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[key]++
	if q := f.fail[key]; len(q) > 0 {
		f.fail[key] = q[1:]
		return q[0]
	}
	return 0
}

func (f *fakeArtifacts) serve(w http.ResponseWriter, r *http.Request) {
	body := f.record(r)
	switch {
	case strings.HasPrefix(r.URL.Path, twirpService):
		f.twirp(w, r, strings.TrimPrefix(r.URL.Path, twirpService), body)
	case strings.HasPrefix(r.URL.Path, "/blob/"):
		f.blobPut(w, r, body)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeArtifacts) twirp(w http.ResponseWriter, r *http.Request, method string, body []byte) {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, `{"code":"bad_route","msg":"bad method"}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"code":"unauthenticated","msg":"bad token"}`)
		return
	}
	if st := f.injected(method); st != 0 {
		w.WriteHeader(st)
		if st >= 500 {
			io.WriteString(w, "<html><body>"+strconv.Itoa(st)+" Bad Gateway</body></html>") // not JSON, like a proxy
		} else {
			io.WriteString(w, `{"code":"invalid_argument","msg":"refused"}`)
		}
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"code":"malformed","msg":"not json"}`)
		return
	}
	key := func(snake, camel string) string {
		if f.camel {
			return camel
		}
		return snake
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if req["workflow_run_backend_id"] != "run-backend-1" || req["workflow_job_run_backend_id"] != "job-backend-2" {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"code":"invalid_argument","msg":"backend ids"}`)
		return
	}
	switch method {
	case "CreateArtifact":
		f.createReq = req
		f.name, _ = req["name"].(string)
		f.expiresAt, _ = req["expires_at"].(string)
		if v, _ := req["version"].(float64); v != 4 {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":"invalid_argument","msg":"version"}`)
			return
		}
		signed := f.srv.URL + "/blob/" + f.name + ".zip?sv=2023-11-03&se=2030-01-01&sr=b&sp=cw&sig=" + strings.ReplaceAll(fakeSig, "=", "%3D")
		json.NewEncoder(w).Encode(map[string]any{"ok": true, key("signed_upload_url", "signedUploadUrl"): signed, "unknown_field": 1})
	case "FinalizeArtifact":
		f.size, _ = req["size"].(string)
		f.hash, _ = req["hash"].(string)
		sum := sha256.Sum256(f.blob)
		if !f.committed || f.size != strconv.Itoa(len(f.blob)) || f.hash != "sha256:"+hex.EncodeToString(sum[:]) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"code":"invalid_argument","msg":"size or hash mismatch"}`)
			return
		}
		if f.camel {
			io.WriteString(w, `{"ok":true,"artifactId":42}`)
		} else {
			io.WriteString(w, `{"ok":true,"artifact_id":"42"}`)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"code":"bad_route","msg":"no such method"}`)
	}
}

func (f *fakeArtifacts) blobPut(w http.ResponseWriter, r *http.Request, body []byte) {
	q := r.URL.Query()
	if r.Method != http.MethodPut || q.Get("sig") != fakeSig || r.Header.Get("x-ms-version") == "" {
		w.Header().Set("x-ms-error-code", "AuthenticationFailed")
		w.WriteHeader(http.StatusForbidden)
		return
	}
	switch q.Get("comp") {
	case "block":
		if st := f.injected("PutBlock"); st != 0 {
			w.WriteHeader(st)
			return
		}
		id := q.Get("blockid")
		if _, err := base64.StdEncoding.DecodeString(id); err != nil {
			w.Header().Set("x-ms-error-code", "InvalidQueryParameterValue")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		sum := md5.Sum(body)
		if r.Header.Get("Content-MD5") != base64.StdEncoding.EncodeToString(sum[:]) {
			w.Header().Set("x-ms-error-code", "Md5Mismatch")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.blocks[id] = body
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case "blocklist":
		if st := f.injected("PutBlockList"); st != 0 {
			w.WriteHeader(st)
			return
		}
		var list struct {
			Latest []string `xml:"Latest"`
		}
		if err := xml.Unmarshal(body, &list); err != nil || r.Header.Get("x-ms-blob-content-type") != "application/zip" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		var blob bytes.Buffer
		for _, id := range list.Latest {
			b, ok := f.blocks[id]
			if !ok {
				f.mu.Unlock()
				w.Header().Set("x-ms-error-code", "InvalidBlockList")
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			blob.Write(b)
		}
		f.blob, f.committed, f.blockIDs = blob.Bytes(), true, list.Latest
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// fakeGitHub implements the REST endpoints the action uses.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server
	recorder

	mu            sync.Mutex
	nextID        int64
	comments      map[int][]*fakeComment // PR number → comments, oldest first
	commentStatus int                    // answer comment writes with this status (403 for a fork)
	rateLimitOnce bool                   // answer the first comment listing with a primary rate limit
	files         map[string][]map[string]any
	issues        map[int]string // issue number → title
	mergeBase     string         // merge_base_commit of a comparison
	// compareCommits are the commits of a comparison; parents the parents
	// of a commit (GET /commits/{sha}).
	compareCommits []string
	parents        map[string][]string
	// contents maps "<ref>:<path>" to a file's content (GET /contents);
	// refs lists the refs whose root can be listed.
	contents map[string]string
	refs     map[string]bool
	// createThen502 answers this many comment creations with 502 after
	// creating the comment (a proxy that lost the answer).
	createThen502 int
	edits         int
	creates       int
	now           func() time.Time
}

type fakeComment struct {
	ID    int64
	Body  string
	Login string
	Type  string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{t: t, nextID: 1000, comments: map[int][]*fakeComment{}, files: map[string][]map[string]any{}, now: time.Now,
		parents: map[string][]string{}, contents: map[string]string{}, refs: map[string]bool{}, issues: map[int]string{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGitHub) addComment(pr int, login, typ, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextID++
	g.comments[pr] = append(g.comments[pr], &fakeComment{ID: g.nextID, Body: body, Login: login, Type: typ})
}

func (g *fakeGitHub) ours(pr int) []*fakeComment {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*fakeComment
	for _, c := range g.comments[pr] {
		if c.Login == defaultBot {
			out = append(out, c)
		}
	}
	return out
}

func (g *fakeGitHub) commentJSON(c *fakeComment) map[string]any {
	return map[string]any{
		"id": c.ID, "body": c.Body,
		"user":     map[string]any{"login": c.Login, "type": c.Type},
		"html_url": fmt.Sprintf("https://github.com/octo/widgets/pull/1#issuecomment-%d", c.ID),
	}
}

func (g *fakeGitHub) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// page cuts a list by page and per_page and sets the Link header.
func (g *fakeGitHub) page(w http.ResponseWriter, r *http.Request, n int) (int, int) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if pg <= 0 {
		pg = 1
	}
	lo, hi := min((pg-1)*per, n), min(pg*per, n)
	if hi < n {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(pg+1))
		u.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, g.srv.URL, u.String()))
	}
	return lo, hi
}

func (g *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body := g.record(r)
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		g.writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Requires authentication"})
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/user":
		g.writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user"})
	case len(parts) == 6 && parts[0] == "repos" && parts[3] == "issues" && parts[5] == "comments":
		pr, _ := strconv.Atoi(parts[4])
		if r.Method == http.MethodGet {
			if g.rateLimitOnce {
				g.rateLimitOnce = false
				w.Header().Set("X-RateLimit-Limit", "5000")
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(g.now().Add(30*time.Second).Unix(), 10))
				g.writeJSON(w, http.StatusForbidden, map[string]any{"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"})
				return
			}
			cs := g.comments[pr]
			lo, hi := g.page(w, r, len(cs))
			out := []any{}
			for _, c := range cs[lo:hi] {
				out = append(out, g.commentJSON(c))
			}
			g.writeJSON(w, http.StatusOK, out)
			return
		}
		if g.commentStatus != 0 {
			g.writeJSON(w, g.commentStatus, map[string]any{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"})
			return
		}
		var in struct{ Body string }
		json.Unmarshal(body, &in)
		g.nextID++
		c := &fakeComment{ID: g.nextID, Body: in.Body, Login: defaultBot, Type: "Bot"}
		g.comments[pr] = append(g.comments[pr], c)
		g.creates++
		if g.createThen502 > 0 {
			g.createThen502--
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html>502 Bad Gateway</html>")
			return
		}
		g.writeJSON(w, http.StatusCreated, g.commentJSON(c))
	case len(parts) == 6 && parts[0] == "repos" && parts[3] == "issues" && parts[4] == "comments" && r.Method == http.MethodPatch:
		if g.commentStatus != 0 {
			g.writeJSON(w, g.commentStatus, map[string]any{"message": "Resource not accessible by integration"})
			return
		}
		id, _ := strconv.ParseInt(parts[5], 10, 64)
		var in struct{ Body string }
		json.Unmarshal(body, &in)
		for _, cs := range g.comments {
			for _, c := range cs {
				if c.ID == id {
					if c.Login != defaultBot {
						g.writeJSON(w, http.StatusForbidden, map[string]any{"message": "not yours"})
						return
					}
					c.Body = in.Body
					g.edits++
					g.writeJSON(w, http.StatusOK, g.commentJSON(c))
					return
				}
			}
		}
		g.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	case r.Method == http.MethodGet && len(parts) == 5 && parts[0] == "repos" && parts[3] == "issues":
		n, _ := strconv.Atoi(parts[4])
		title, ok := g.issues[n]
		if !ok {
			g.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		g.writeJSON(w, http.StatusOK, map[string]any{"number": n, "title": title, "state": "open"})
	case r.Method == http.MethodGet && len(parts) >= 4 && parts[0] == "repos" && parts[3] == "contents":
		ref := r.URL.Query().Get("ref")
		p := strings.Join(parts[4:], "/")
		if p == "" && g.refs[ref] {
			g.writeJSON(w, http.StatusOK, []any{})
			return
		}
		c, ok := g.contents[ref+":"+p]
		if !ok {
			g.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		g.writeJSON(w, http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "size": len(c), "name": p, "path": p,
			"content": base64.StdEncoding.EncodeToString([]byte(c)), "sha": fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(c), c))))})
	default:
		key := r.Method + " " + r.URL.Path
		files, ok := g.files[key]
		if !ok {
			g.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		lo, hi := g.page(w, r, len(files))
		switch {
		case strings.Contains(r.URL.Path, "/compare/"):
			commits := []any{}
			for _, c := range g.compareCommits {
				commits = append(commits, map[string]any{"sha": c})
			}
			// As GitHub: a comparison's files come with its first page,
			// at most maxCompareFiles of them; its pages page the commits.
			shown := files[:0]
			if pg, _ := strconv.Atoi(r.URL.Query().Get("page")); pg <= 1 {
				shown = files[:min(len(files), maxCompareFiles)]
			}
			g.writeJSON(w, http.StatusOK, map[string]any{"merge_base_commit": map[string]any{"sha": g.mergeBase}, "files": shown, "status": "ahead",
				"commits": commits, "total_commits": len(commits)})
		case strings.Contains(r.URL.Path, "/commits/") && !strings.Contains(r.URL.Path, "/pulls/"):
			sha := parts[len(parts)-1]
			parents := []any{}
			for _, p := range g.parents[sha] {
				parents = append(parents, map[string]any{"sha": p})
			}
			g.writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "files": files[lo:hi], "parents": parents})
		default:
			g.writeJSON(w, http.StatusOK, files[lo:hi])
		}
	}
}

// fakeSleep records waits instead of sleeping.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *fakeSleep) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// runtimeToken is an unsigned JWT with the Actions.Results scope.
func runtimeToken() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"typ":"JWT","alg":"RS256"}`)) + "." +
		enc([]byte(`{"scp":"Actions.ExampleScope Actions.Results:run-backend-1:job-backend-2","ac":"[]"}`)) + "." +
		enc([]byte("not-a-real-signature"))
}
