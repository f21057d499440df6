// Package mcpserver serves a pack store over the Model Context Protocol
// (the official Go SDK): seed 001's input and output tools with exactly
// their actions and arguments, the packs and documents as resources, and,
// when a query function is given, seed 003's query tool.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxpack/ctxpack/store"
	"github.com/ctxpack/ctxpack/transparency"
)

// Options configure the server.
type Options struct {
	// Store is the pack store served.
	Store *store.Store
	// Version is the server version announced at initialize.
	Version string
	// Query, when set, serves seed 003's query tool.
	Query QueryFunc
}

// resource URIs: ctxpack://packs/<id> is a stored pack's JSON, exactly as
// stored; ctxpack://packs/<id>/document is the entry with its document.
const (
	uriPrefix      = "ctxpack://packs/"
	documentSuffix = "/document"
)

// New builds the MCP server.
func New(opts Options) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ctxpack", Title: "ctxpack pack store", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "ctxpack serves context packs of a git repository and the reviews agents write about them. " +
			"output read renders a pack page by page (profile orchestrator, reviewer or executor; follow next_page_token); " +
			"input get returns an entry's document and revision; input write replaces the whole document " +
			"(id or name with expected_revision; status=finalized runs the finalize checklist: scope, findings, qa.verdict, refs path:start-end).",
		Capabilities: &mcp.ServerCapabilities{},
	})
	h := &handlers{store: opts.Store}
	srv.AddTool(&mcp.Tool{
		Name:        "input",
		Title:       "ctxpack store: entries and documents",
		Description: "Manage stored packs and the documents written about them. Actions: list (freshness), get (id|name), write (document; update with id|name and expected_revision, create without; validate_only; status draft|finalized), ttl (id|name with ttl_minutes or extend_minutes), delete (id|name). Returns JSON; errors are {kind, code, details, message}.",
		InputSchema: inputSchema,
	}, h.input)
	srv.AddTool(&mcp.Tool{
		Name:        "output",
		Title:       "ctxpack store: read packs",
		Description: "Read stored packs as markdown. Actions: list (freshness; expired hidden unless freshness=expired), read (id|name; profile orchestrator (default, compact, limit 6) | reviewer (full) | executor; limit, offset, page_token, contains; freshness=expired to read an expired pack within its grace). The LEGEND says selected_by, selected_revision, selected_status, freshness and next_page_token.",
		InputSchema: outputSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, h.output)
	if opts.Query != nil {
		addQuery(srv, opts.Query)
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "pack", Title: "A stored context pack (canonical JSON, as stored)",
		URITemplate: uriPrefix + "{id}", MIMEType: "application/json",
	}, h.readResource)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "document", Title: "A store entry with its document, revision and freshness",
		URITemplate: uriPrefix + "{id}" + documentSuffix, MIMEType: "application/json",
	}, h.readResource)
	// The store changes under the server (CI, the hook, other servers), so
	// the resource list is read from it on every request.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				return h.listResources(ctx)
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

type handlers struct {
	store *store.Store
}

// input runs the input tool.
func (h *handlers) input(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := parseArgs("input", req.Params.Arguments)
	if err != nil {
		return toolError(err), nil
	}
	res, err := h.runInput(ctx, a)
	if err != nil {
		return toolError(err), nil
	}
	return jsonResult(res), nil
}

func (h *handlers) runInput(ctx context.Context, a *args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	name, err := a.str("name")
	if err != nil {
		return nil, err
	}
	freshness, err := a.str("freshness")
	if err != nil {
		return nil, err
	}
	target := store.Target{ID: id, Name: name, Freshness: freshness}
	switch a.action {
	case "list":
		views, err := h.store.List(ctx, freshness)
		if err != nil {
			return nil, err
		}
		if views == nil {
			views = []*store.View{}
		}
		return map[string]any{"packs": views}, nil
	case "get":
		v, err := h.store.Get(ctx, target)
		if err != nil {
			return nil, err
		}
		return map[string]any{"pack": v}, nil
	case "delete":
		v, err := h.store.Delete(ctx, target)
		if err != nil {
			return nil, err
		}
		return map[string]any{"deleted": v}, nil
	case "ttl":
		in := store.TTLInput{Target: target}
		if in.TTLMinutes, err = a.integer("ttl_minutes"); err != nil {
			return nil, err
		}
		if in.ExtendMinutes, err = a.integer("extend_minutes"); err != nil {
			return nil, err
		}
		v, err := h.store.TTL(ctx, in)
		if err != nil {
			return nil, err
		}
		return map[string]any{"pack": v}, nil
	}
	// write
	in := store.WriteInput{ID: id, Name: name, Document: a.raw["document"]}
	if in.ExpectedRevision, err = a.integer("expected_revision"); err != nil {
		return nil, err
	}
	if in.Status, err = a.str("status"); err != nil {
		return nil, err
	}
	if in.ValidateOnly, err = a.boolean("validate_only"); err != nil {
		return nil, err
	}
	return h.store.Write(ctx, in)
}

// output runs the output tool: markdown, always.
func (h *handlers) output(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := parseArgs("output", req.Params.Arguments)
	if err != nil {
		return toolError(err), nil
	}
	text, err := h.runOutput(ctx, a)
	if err != nil {
		return toolError(err), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
}

func (h *handlers) runOutput(ctx context.Context, a *args) (string, error) {
	freshness, err := a.str("freshness")
	if err != nil {
		return "", err
	}
	if a.action == "list" {
		views, err := h.store.List(ctx, freshness)
		if err != nil {
			return "", err
		}
		return store.RenderList(views, freshness), nil
	}
	in := store.ReadInput{Nav: mcpNav}
	in.Freshness = freshness
	for _, f := range []struct {
		name string
		dst  *string
	}{{"id", &in.ID}, {"name", &in.Name}, {"profile", &in.Profile}, {"page_token", &in.PageToken}, {"contains", &in.Contains}} {
		if *f.dst, err = a.str(f.name); err != nil {
			return "", err
		}
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"limit", &in.Limit}, {"offset", &in.Offset}} {
		n, err := a.integer(f.name)
		if err != nil {
			return "", err
		}
		if n != nil {
			*f.dst = *n
		}
	}
	return h.store.Read(ctx, in)
}

// mcpNav words the deep-nav hints as output read calls.
func mcpNav(id string, hint transparency.ReadHint) string {
	call := map[string]any{"action": "read", "id": id}
	switch {
	case hint.NextPage:
		call["page_token"] = "<next_page_token>"
	default:
		if hint.Profile != "" {
			call["profile"] = hint.Profile
		}
		if hint.Contains != "" {
			call["contains"] = hint.Contains
		} else if hint.Placeholder {
			call["contains"] = "<path or id>"
		}
	}
	data, err := json.Marshal(call)
	if err != nil {
		return ""
	}
	return "output " + string(data)
}

// toolError is a tool result carrying seed 001's error contract, as JSON
// text and as structured content.
func toolError(err error) *mcp.CallToolResult {
	e := store.AsError(err)
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	data, merr := json.Marshal(e)
	if merr != nil {
		data = []byte(fmt.Sprintf(`{"kind":"internal","code":"internal_error","message":%q,"details":{}}`, e.Message))
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}, StructuredContent: json.RawMessage(data)}
}

func jsonResult(v any) *mcp.CallToolResult {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return toolError(err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}, StructuredContent: json.RawMessage(data)}
}

// listResources lists a resource per pack and per document of the entries
// a default list shows (expired ones hidden).
func (h *handlers) listResources(ctx context.Context) (*mcp.ListResourcesResult, error) {
	views, err := h.store.List(ctx, "")
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, v := range views {
		label := v.ID
		if v.Name != "" {
			label = v.Name + " (" + v.ID + ")"
		}
		if v.Pack != nil {
			res.Resources = append(res.Resources, &mcp.Resource{URI: uriPrefix + v.ID, Name: v.ID, Title: "pack " + label, MIMEType: "application/json",
				Description: fmt.Sprintf("context pack of %s at %s (%s, %s)", v.Pack.Repository, shortSHA(v.Pack.Head), v.Status, v.FreshnessState)})
		}
		res.Resources = append(res.Resources, &mcp.Resource{URI: uriPrefix + v.ID + documentSuffix, Name: v.ID + "-document", Title: "document " + label, MIMEType: "application/json",
			Description: fmt.Sprintf("revision %d, %s, sections: %s", v.Revision, v.Status, strings.Join(v.Sections, ", "))})
	}
	return res, nil
}

func (h *handlers) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "ctxpack" || u.Host != "packs" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	rest := strings.TrimPrefix(u.Path, "/")
	id, isDoc := strings.CutSuffix(rest, documentSuffix)
	if !store.ValidID(id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var data []byte
	if isDoc {
		v, err := h.store.Get(ctx, store.Target{ID: id})
		if err != nil {
			return nil, resourceErr(uri, err)
		}
		if data, err = json.MarshalIndent(v, "", "  "); err != nil {
			return nil, err
		}
	} else {
		if data, _, err = h.store.PackBytes(ctx, store.Target{ID: id}); err != nil {
			return nil, resourceErr(uri, err)
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}}, nil
}

func resourceErr(uri string, err error) error {
	if e := store.AsError(err); e.Kind == store.KindNotFound {
		return mcp.ResourceNotFoundError(uri)
	}
	return err
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "the work tree"
	}
	return s
}
