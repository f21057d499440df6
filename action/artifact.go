package action

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The artifact protocol of actions/upload-artifact v4+ (actions/toolkit
// packages/artifact): a Twirp JSON service on ACTIONS_RESULTS_URL's origin
// creates the artifact and hands out a signed Azure Blob URL; the zip goes
// there as blocks (Put Block, Put Block List); FinalizeArtifact records its
// size and sha256.

const (
	twirpService = "/twirp/github.actions.results.api.v1.ArtifactService/"
	// artifactVersion 4 is a zip artifact (upload-artifact v4).
	artifactVersion = 4
	// azureVersion is the x-ms-version of the Blob REST calls.
	azureVersion = "2023-11-03"
	// DefaultBlockSize is the Put Block size; the toolkit uploads 8 MiB
	// chunks.
	DefaultBlockSize = 8 << 20
)

// ErrNoRuntime means the Actions runtime variables are absent: not inside
// a job, or on GHES, where this artifact service does not exist.
var ErrNoRuntime = errors.New("artifact upload unavailable")

// invalidNameChars are what GitHub refuses in an artifact name (the
// toolkit's invalidArtifactNameCharacters).
var invalidNameChars = []struct{ c, name string }{
	{`"`, "double quote"}, {":", "colon"}, {"<", "less than"}, {">", "greater than"},
	{"|", "vertical bar"}, {"*", "asterisk"}, {"?", "question mark"},
	{"\r", "carriage return"}, {"\n", "line feed"}, {`\`, "backslash"}, {"/", "forward slash"},
}

// ValidateArtifactName checks a name as GitHub does.
func ValidateArtifactName(name string) error {
	if name == "" {
		return errors.New("artifact name is empty: provide a name (artifact-name)")
	}
	for _, ic := range invalidNameChars {
		if strings.Contains(name, ic.c) {
			return fmt.Errorf("artifact name %q contains a %s (%q); these are not allowed: \" : < > | * ? \\r \\n \\ /", oneLine(clip(name, 100)), ic.name, ic.c)
		}
	}
	return nil
}

// BackendIDs reads the workflow run and job backend ids from the runtime
// token's scp claim ("Actions.Results:<run>:<job>"). The token's signature is
// not verified: the service does that.
func BackendIDs(token string) (run, job string, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", "", errors.New("ACTIONS_RUNTIME_TOKEN is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", "", errors.New("ACTIONS_RUNTIME_TOKEN: the payload is not base64url")
	}
	var claims struct {
		Scp string `json:"scp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", "", errors.New("ACTIONS_RUNTIME_TOKEN: the payload is not JSON")
	}
	for _, scope := range strings.Fields(claims.Scp) {
		f := strings.Split(scope, ":")
		if f[0] != "Actions.Results" {
			continue
		}
		if len(f) != 3 || f[1] == "" || f[2] == "" {
			return "", "", fmt.Errorf("ACTIONS_RUNTIME_TOKEN: malformed scope %q", clip(scope, 120))
		}
		return f[1], f[2], nil
	}
	return "", "", errors.New("ACTIONS_RUNTIME_TOKEN: no Actions.Results scope in the scp claim")
}

// ArtifactClient uploads one zip artifact.
type ArtifactClient struct {
	HTTP   *http.Client
	Origin string // scheme://host of ACTIONS_RESULTS_URL
	token  string
	RunID  string
	JobID  string
	Retry  *retrier
	// BlockSize is the Put Block size (DefaultBlockSize when 0).
	BlockSize int
	// Mask hides a value in the job log (the signed URL's signature).
	Mask func(string)
	Logf func(format string, args ...any)
	// UserAgent identifies the client.
	UserAgent string
	// Now is the clock (x-ms-date); time.Now when nil.
	Now func() time.Time
}

// NewArtifactClient reads ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL.
// It returns ErrNoRuntime (wrapped with the reason) when they are absent or
// the server is GHES.
func NewArtifactClient(getenv func(string) string, hc *http.Client, r *retrier) (*ArtifactClient, error) {
	token, results := getenv("ACTIONS_RUNTIME_TOKEN"), getenv("ACTIONS_RESULTS_URL")
	if token == "" || results == "" {
		return nil, fmt.Errorf("%w: ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL are not set (not inside a GitHub Actions job, or on GitHub Enterprise Server, which lacks the v4 artifact service)", ErrNoRuntime)
	}
	if isGHES(getenv("GITHUB_SERVER_URL")) {
		return nil, fmt.Errorf("%w: GitHub Enterprise Server does not support the v4 artifact service (upload-artifact@v4)", ErrNoRuntime)
	}
	u, err := url.Parse(results)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ACTIONS_RESULTS_URL %q is not a URL", clip(redactURL(results), 100))
	}
	run, job, err := BackendIDs(token)
	if err != nil {
		return nil, err
	}
	return &ArtifactClient{HTTP: hc, Origin: u.Scheme + "://" + u.Host, token: token, RunID: run, JobID: job, Retry: r}, nil
}

// isGHES follows the toolkit: anything but github.com, *.ghe.com and
// *.localhost is GitHub Enterprise Server.
func isGHES(serverURL string) bool {
	if serverURL == "" {
		return false
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return false
	}
	h := strings.ToUpper(u.Hostname())
	return h != "GITHUB.COM" && !strings.HasSuffix(h, ".GHE.COM") && !strings.HasSuffix(h, ".LOCALHOST")
}

// TwirpError is a refusal of the artifact service.
type TwirpError struct {
	Method string
	Status int
	Msg    string
}

func (e *TwirpError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Method, e.Status)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Status == http.StatusConflict {
		s += " (an artifact of this name already exists in this workflow run: set a distinct artifact-name, e.g. per matrix job)"
	}
	return s
}

// UsageError is the service's storage quota refusal.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string {
	return "artifact storage quota has been hit: " + e.Msg + " (delete artifacts, run cleanup, or lower retention-days)"
}

// Upload creates the artifact, uploads data (a zip) and finalizes it. It
// returns the artifact id.
func (c *ArtifactClient) Upload(ctx context.Context, name string, data []byte, expires *time.Time) (string, error) {
	if err := ValidateArtifactName(name); err != nil {
		return "", err
	}
	create := map[string]any{
		"workflow_run_backend_id":     c.RunID,
		"workflow_job_run_backend_id": c.JobID,
		"name":                        name,
		"version":                     artifactVersion,
	}
	if expires != nil {
		create["expires_at"] = expires.UTC().Format(time.RFC3339)
	}
	resp, err := c.twirp(ctx, "CreateArtifact", create)
	if err != nil {
		return "", err
	}
	if ok, _ := boolField(resp, "ok"); !ok {
		return "", errors.New("CreateArtifact: the service answered ok=false")
	}
	signed, _ := stringField(resp, "signed_upload_url", "signedUploadUrl")
	if signed == "" {
		return "", errors.New("CreateArtifact: no signed_upload_url in the answer")
	}
	su, err := url.Parse(signed)
	if err != nil || (su.Scheme != "https" && su.Scheme != "http") || su.Host == "" {
		return "", errors.New("CreateArtifact: signed_upload_url is not an http(s) URL")
	}
	if sig := su.Query().Get("sig"); sig != "" && c.Mask != nil {
		c.Mask(sig)
		c.Mask(url.QueryEscape(sig))
	}
	c.logf("uploading %d bytes to %s", len(data), su.Host)
	if err := c.putBlocks(ctx, su, data); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	fin, err := c.twirp(ctx, "FinalizeArtifact", map[string]any{
		"workflow_run_backend_id":     c.RunID,
		"workflow_job_run_backend_id": c.JobID,
		"name":                        name,
		"size":                        strconv.Itoa(len(data)), // int64: a JSON string in protobuf JSON
		"hash":                        "sha256:" + hex.EncodeToString(sum[:]),
	})
	if err != nil {
		return "", err
	}
	if ok, _ := boolField(fin, "ok"); !ok {
		return "", errors.New("FinalizeArtifact: the service answered ok=false")
	}
	id, _ := stringField(fin, "artifact_id", "artifactId")
	if id == "" {
		return "", errors.New("FinalizeArtifact: no artifact_id in the answer")
	}
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return "", fmt.Errorf("FinalizeArtifact: artifact_id %q is not an integer", clip(id, 40))
	}
	return id, nil
}

func (c *ArtifactClient) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// twirp calls one method with retries, as the toolkit's Twirp client does:
// 429 and 5xx, network errors and bodies that are not JSON are retried;
// other statuses are final.
func (c *ArtifactClient) twirp(ctx context.Context, method string, req map[string]any) (map[string]json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	err = c.Retry.do(ctx, method, func(int) error {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Origin+twirpService+method, bytes.NewReader(body))
		if err != nil {
			return err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+c.token)
		if c.UserAgent != "" {
			r.Header.Set("User-Agent", c.UserAgent)
		}
		res, err := c.HTTP.Do(r)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return retryErr(redactErr(err))
		}
		raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		if err != nil {
			return retryErr(redactErr(err))
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return retryErr(fmt.Errorf("HTTP %d with a body that is not JSON", res.StatusCode))
		}
		if res.StatusCode >= 200 && res.StatusCode < 300 {
			out = m
			return nil
		}
		msg, _ := stringField(m, "msg")
		e := &TwirpError{Method: method, Status: res.StatusCode, Msg: redactText(clip(oneLine(msg), 300))}
		switch res.StatusCode {
		case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return retryErr(e)
		}
		if strings.Contains(strings.ToLower(msg), "insufficient usage") {
			return &UsageError{Msg: e.Msg}
		}
		return e
	})
	return out, err
}

// putBlocks uploads data to a block blob as the Azure SDK does: Put Block for
// each chunk (base64 block ids of equal length), then Put Block List.
func (c *ArtifactClient) putBlocks(ctx context.Context, su *url.URL, data []byte) error {
	size := c.BlockSize
	if size <= 0 {
		size = DefaultBlockSize
	}
	prefix := fmt.Sprintf("%x", sha256.Sum256(data))[:32]
	var ids []string
	for i, off := 0, 0; off < len(data) || i == 0; i++ {
		end := min(off+size, len(data))
		chunk := data[off:end]
		id := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%s-%06d", prefix, i)))
		ids = append(ids, id)
		sum := md5.Sum(chunk)
		err := c.azurePut(ctx, fmt.Sprintf("Put Block %d", i), su, url.Values{"comp": {"block"}, "blockid": {id}}, chunk,
			map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(sum[:])})
		if err != nil {
			return err
		}
		off = end
	}
	var list bytes.Buffer
	list.WriteString(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	for _, id := range ids {
		list.WriteString("<Latest>" + id + "</Latest>")
	}
	list.WriteString("</BlockList>")
	return c.azurePut(ctx, "Put Block List", su, url.Values{"comp": {"blocklist"}}, list.Bytes(),
		map[string]string{"Content-Type": "application/xml", "x-ms-blob-content-type": "application/zip"})
}

func (c *ArtifactClient) azurePut(ctx context.Context, what string, su *url.URL, extra url.Values, body []byte, headers map[string]string) error {
	u := *su
	q := u.Query()
	for k, v := range extra {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	target := u.String()
	return c.Retry.do(ctx, what, func(int) error {
		r, err := http.NewRequestWithContext(ctx, http.MethodPut, target, bytes.NewReader(body))
		if err != nil {
			return redactErr(err)
		}
		r.Header.Set("x-ms-version", azureVersion)
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		r.Header.Set("x-ms-date", now().UTC().Format(http.TimeFormat))
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		res, err := c.HTTP.Do(r)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return retryErr(redactErr(err))
		}
		io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		if res.StatusCode == http.StatusCreated || res.StatusCode == http.StatusOK {
			return nil
		}
		e := fmt.Errorf("%s: HTTP %d %s", what, res.StatusCode, oneLine(clip(res.Header.Get("x-ms-error-code"), 80)))
		switch res.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return retryErr(e)
		}
		return e
	})
}

// stringField reads the first present key as a string; a JSON number is
// accepted (int64 fields may arrive either way).
func stringField(m map[string]json.RawMessage, keys ...string) (string, bool) {
	for _, k := range keys {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&n) == nil {
			return n.String(), true
		}
	}
	return "", false
}

func boolField(m map[string]json.RawMessage, key string) (bool, bool) {
	raw, ok := m[key]
	if !ok {
		return false, false
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return false, false
	}
	return b, true
}
