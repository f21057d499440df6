package audit

import (
	"context"
	"fmt"
	"github.com/ctxpack/ctxpack/internal/secrettest"
	"strings"
	"testing"
)

// benchCorpus builds ~1 MB of mixed source text (Go, YAML, JSON, Python,
// shell, markdown) with a few planted secrets, split into files of ~8 KB.
func benchCorpus(size int) []ScanItem {
	f := secrettest.Make(1234)
	g := secrettest.NewGen(4321)
	chunks := []func(i int) (string, string){
		func(i int) (string, string) {
			return fmt.Sprintf("internal/svc%d/handler.go", i), fmt.Sprintf(`package svc%d

import (
	"context"
	"net/http"
	"os"
)

// Handler%d serves requests for the %s resource.
type Handler%d struct {
	client *http.Client
	token  string
}

func NewHandler%d() *Handler%d {
	return &Handler%d{client: http.DefaultClient, token: os.Getenv("SVC_TOKEN")}
}

func (h *Handler%d) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := context.WithValue(r.Context(), "request-id", r.Header.Get("X-Request-Id"))
	if err := h.process(ctx, r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
`, i, i, g.Str(secrettest.Alnum, 8), i, i, i, i, i)
		},
		func(i int) (string, string) {
			return fmt.Sprintf("deploy/app%d/values.yaml", i), fmt.Sprintf(`replicaCount: %d
image:
  repository: registry.internal/app%d
  tag: "%s"
service:
  type: ClusterIP
  port: 8080
env:
  - name: DB_HOST
    value: db-%d.internal
  - name: DB_PASSWORD
    valueFrom:
      secretKeyRef: {name: db, key: password}
resources:
  limits: {cpu: 500m, memory: 256Mi}
`, i%5+1, i, g.Str(secrettest.Alnum, 12), i)
		},
		func(i int) (string, string) {
			return fmt.Sprintf("web/src/data/fixture%d.json", i), fmt.Sprintf(`{
  "id": "%s",
  "name": "Item %d",
  "tags": ["alpha", "beta", "gamma"],
  "checksum": "%x",
  "nested": {"enabled": true, "count": %d, "url": "https://cdn.internal/assets/%s.png"}
}
`, g.Str(secrettest.Alnum, 20), i, g.Str(secrettest.Alnum, 16), i, g.Str(secrettest.Alnum, 10))
		},
		func(i int) (string, string) {
			return fmt.Sprintf("tools/job%d.py", i), fmt.Sprintf(`import os
import logging

log = logging.getLogger(__name__)


def run_%d(items, password=None):
    """Process the batch; password comes from the environment."""
    password = password or os.environ["JOB_PASSWORD"]
    for item in items:
        if item.get("skip"):
            continue
        log.info("processing %%s", item["id"])
    return len(items)
`, i)
		},
		func(i int) (string, string) {
			return fmt.Sprintf("docs/guide%d.md", i), fmt.Sprintf("# Guide %d\n\nRun `make build` and then `./bin/app --config config.yaml`.\nSet `API_TOKEN` in your environment; never commit it.\n\n| key | value |\n|---|---|\n| retries | 3 |\n| timeout | 30s |\n", i)
		},
	}
	secrets := []string{
		"const ghToken = \"" + f.GitHub + "\"\n",
		"DB_PASSWORD=" + f.DBPassword + "\n",
		"stripe_key: " + f.Stripe + "\n",
		f.RSAKey + "\n",
		"Authorization: Bearer " + f.JWT + "\n",
	}
	var items []ScanItem
	total := 0
	for i := 0; total < size; i++ {
		var b strings.Builder
		var path string
		for b.Len() < 8<<10 {
			p, c := chunks[i%len(chunks)](i*100 + b.Len())
			if path == "" {
				path = p
			}
			b.WriteString(c)
		}
		if i%10 == 0 {
			b.WriteString(secrets[(i/10)%len(secrets)])
		}
		items = append(items, ScanItem{Path: path, Content: []byte(b.String())})
		total += b.Len()
	}
	return items
}

// BenchmarkScan scans ~1 MB of mixed source text file by file on one
// goroutine (no cache).
func BenchmarkScan(b *testing.B) {
	s := newDefaultScanner(b)
	items := benchCorpus(1 << 20)
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		n := 0
		for _, it := range items {
			fs, err := s.Scan(ctx, it.Path, it.Content)
			if err != nil {
				b.Fatal(err)
			}
			n += len(fs)
		}
		if n == 0 {
			b.Fatal("no findings")
		}
	}
}

// BenchmarkScanAll is the same corpus through ScanAll (NumCPU workers).
func BenchmarkScanAll(b *testing.B) {
	s := newDefaultScanner(b)
	items := benchCorpus(1 << 20)
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ScanAll(context.Background(), items); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanCached is the same corpus with every entry in the cache.
func BenchmarkScanCached(b *testing.B) {
	s, err := NewScanner(ScannerOptions{CacheDir: b.TempDir(), CacheKey: testCacheKey})
	if err != nil {
		b.Fatal(err)
	}
	items := benchCorpus(1 << 20)
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	if _, err := s.ScanAll(context.Background(), items); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ScanAll(context.Background(), items); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindAssignments is the assignment rules alone over the corpus.
func BenchmarkFindAssignments(b *testing.B) {
	items := benchCorpus(1 << 20)
	total := 0
	for _, it := range items {
		total += len(it.Content)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, it := range items {
			FindAssignments(it.Path, it.Content)
		}
	}
}

// BenchmarkNewScanner is the cost of loading the default rules and building
// the detector.
func BenchmarkNewScanner(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewScanner(ScannerOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
