package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeHTTP serves srv over the streamable HTTP transport at addr, which
// must be a loopback address (127.0.0.1:PORT, [::1]:PORT or
// localhost:PORT): the store is not meant for the network. The SDK's DNS
// rebinding protection and a cross-origin check stay on. ready, when not
// nil, receives the address listened on. It returns when ctx ends.
func ServeHTTP(ctx context.Context, srv *mcp.Server, addr string, ready func(net.Addr)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT on the loopback interface, e.g. 127.0.0.1:8765", addr)
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("--http %q: only a loopback address is served (127.0.0.1, ::1 or localhost)", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := &http.Server{Handler: http.NewCrossOriginProtection().Handler(handler), ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
