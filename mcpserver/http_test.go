package mcpserver_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/mcpserver"
	"github.com/ctxpack/ctxpack/store"
)

// Streamable HTTP is served on loopback addresses only; a real client reads
// through it.
func TestServeHTTP(t *testing.T) {
	sc, err := audit.NewScanner(audit.ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Options{Dir: t.TempDir(), Scanner: sc})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(mcpserver.Options{Store: st, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:80", "nonsense"} {
		if err := mcpserver.ServeHTTP(ctx, srv, addr, nil); err == nil || !strings.Contains(err.Error(), "--http") {
			t.Fatalf("%s: %v", addr, err)
		}
	}
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- mcpserver.ServeHTTP(ctx, srv, "127.0.0.1:0", func(a net.Addr) { ready <- a }) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr.String(), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "output", Arguments: map[string]any{"action": "list"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "0 pack(s)") {
		t.Fatalf("list over HTTP: %+v %v", res, err)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
