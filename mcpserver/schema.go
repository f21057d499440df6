package mcpserver

import "encoding/json"

// The tools' input schemas describe seed 001's arguments for clients. They
// do not forbid other properties: a retired argument (mode, cursor, match,
// op, …) must reach the handler, which refuses it with what to use instead.
var (
	inputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "get", "write", "ttl", "delete"]},
    "id": {"type": "string", "pattern": "^pk_[a-z2-7]{8}$", "description": "pack id"},
    "name": {"type": "string", "description": "entry name, e.g. pr-123 or repo@main; resolved deterministically (finalized, latest updated_at, highest revision)"},
    "freshness": {"type": "string", "enum": ["fresh", "expiring_soon", "expired"]},
    "document": {"type": "object", "description": "write: the whole document, sections by key (scope, findings, qa, ...); refs are path:start-end strings in refs arrays"},
    "expected_revision": {"type": "integer", "minimum": 1, "description": "write: the revision the update is based on; omit with id/name to create"},
    "validate_only": {"type": "boolean", "description": "write: run every check, persist nothing"},
    "status": {"type": "string", "enum": ["draft", "finalized"], "description": "write: finalized runs the finalize checklist"},
    "ttl_minutes": {"type": "integer", "minimum": 1, "description": "ttl: new time to live from now"},
    "extend_minutes": {"type": "integer", "minimum": 1, "description": "ttl: minutes added to expires_at"}
  },
  "required": ["action"]
}`)
	outputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "read"]},
    "id": {"type": "string", "pattern": "^pk_[a-z2-7]{8}$"},
    "name": {"type": "string"},
    "freshness": {"type": "string", "enum": ["fresh", "expiring_soon", "expired"]},
    "profile": {"type": "string", "enum": ["orchestrator", "reviewer", "executor"], "description": "orchestrator (default): compact, limit 6; reviewer: full evidence; executor: actionable compact"},
    "limit": {"type": "integer", "minimum": 0},
    "offset": {"type": "integer", "minimum": 0, "description": "first chunk of the first page"},
    "page_token": {"type": "string", "description": "next_page_token from the LEGEND"},
    "contains": {"type": "string", "description": "case-insensitive substring of the rendered chunk"}
  },
  "required": ["action"]
}`)
)
