package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// QueryFunc builds a query pack (seed 003) of text over a commit's tree
// ("" for the served repository's working tree) within maxChars (0: the
// default budget), and returns its JSON.
type QueryFunc func(ctx context.Context, text string, maxChars int, commit string) ([]byte, error)

var querySchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "description": "an identifier (Store.Insert), a path (pkg/store/store.go) or a phrase (\"refuse empty keys\")"},
    "max_chars": {"type": "integer", "minimum": 1, "description": "character budget of the answer (default 20000)"},
    "commit": {"type": "string", "description": "a commit (branch, tag, SHA) whose tree is searched; default the working tree"}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

// addQuery registers the query tool.
func addQuery(srv *mcp.Server, q QueryFunc) {
	srv.AddTool(&mcp.Tool{
		Name:  "query",
		Title: "ctxpack: the most relevant code for a query",
		Description: "A query pack: the most relevant code chunks of the repository for an identifier, a path or a phrase, " +
			"ranked deterministically (definitions first, then their callers), every chunk secret-scanned, within max_chars. Returns JSON " +
			"{version, query, model_id, profile, items: [{id path:start:end, role, file, start_line, end_line, symbol, type, score, imports, content, relationship, distance}], budget}.",
		InputSchema: querySchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Query    string `json:"query"`
			MaxChars int    `json:"max_chars"`
			Commit   string `json:"commit"`
		}
		dec := json.NewDecoder(bytes.NewReader(req.Params.Arguments))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return toolError(invalid(map[string]any{"allowed_fields": []string{"query", "max_chars", "commit"}},
				"query: arguments are {query, max_chars, commit}: %v", err)), nil
		}
		if strings.TrimSpace(a.Query) == "" || a.MaxChars < 0 {
			return toolError(invalid(map[string]any{"required_fields": []string{"query"}},
				"query: give a non-empty query (and a positive max_chars)")), nil
		}
		data, err := q(ctx, a.Query, a.MaxChars, a.Commit)
		if err != nil {
			return toolError(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}, StructuredContent: json.RawMessage(data)}, nil
	})
}
