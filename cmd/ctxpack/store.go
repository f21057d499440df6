package main

import (
	"fmt"
	"os"

	"github.com/ctxpack/ctxpack/store"
	"github.com/spf13/cobra"
)

func newStoreCmd(io ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Manage the pack store: packs and the documents agents write about them",
		Long: `The pack store keeps context packs and the documents agents write about
them: entries by id (pk_…) and by name (<repo>@<ref>, pr-123), with
revisions, draft/finalized status, a TTL and freshness. It lives in the
repository's .git/ctxpack/store (or --store-dir) and is what "ctxpack serve"
serves over MCP. TARGET is an id (pk_…) or a name; a name resolves to the
finalized entry first, then the latest updated_at, then the highest revision,
and fails with "ambiguous" on a tie.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStoreListCmd(io), newStoreGetCmd(io), newStoreReadCmd(io), newStoreTTLCmd(io), newStoreDeleteCmd(io),
		newStoreWriteCmd(io, false), newStoreWriteCmd(io, true), newStoreImportCmd(io))
	return cmd
}

// target reads a TARGET argument: an id when it looks like one, else a name.
func target(args []string, freshness string) store.Target {
	t := store.Target{Freshness: freshness}
	if len(args) == 0 {
		return t
	}
	if store.ValidID(args[0]) {
		t.ID = args[0]
	} else {
		t.Name = args[0]
	}
	return t
}

func newStoreListCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	var freshness string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the entries (expired ones only with --freshness expired)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			views, err := st.List(cmd.Context(), freshness)
			if err != nil {
				return storeError(io, asJSON, err)
			}
			if asJSON {
				if views == nil {
					views = []*store.View{}
				}
				return writeJSON(io, map[string]any{"packs": views})
			}
			_, err = fmt.Fprint(io.Out, store.RenderList(views, freshness))
			return err
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&freshness, "freshness", "", "fresh, expiring_soon or expired (default: all but expired)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (errors too: kind, code, details, message)")
	return cmd
}

func newStoreGetCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	var freshness string
	cmd := &cobra.Command{
		Use:   "get TARGET",
		Short: "Print an entry with its document, revision and freshness (JSON)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			v, err := st.Get(cmd.Context(), target(args, freshness))
			if err != nil {
				return storeError(io, true, err)
			}
			return writeJSON(io, map[string]any{"pack": v})
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&freshness, "freshness", "", "the entry's freshness (expired reads an expired entry within its grace)")
	return cmd
}

func newStoreReadCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	in := store.ReadInput{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "read TARGET",
		Short: "Read an entry page by page: its document, then its pack (markdown)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			in.Target = target(args, in.Freshness)
			out, err := st.Read(cmd.Context(), in)
			if err != nil {
				return storeError(io, asJSON, err)
			}
			_, err = fmt.Fprint(io.Out, out)
			return err
		},
	}
	sf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&in.Freshness, "freshness", "", "the entry's freshness (expired reads an expired entry within its grace)")
	f.StringVar(&in.Profile, "profile", "", "orchestrator (default, compact), reviewer (full) or executor")
	f.IntVar(&in.Limit, "limit", 0, "chunks per page (default: 6 orchestrator, 20 executor, all reviewer)")
	f.IntVar(&in.Offset, "offset", 0, "first chunk of the page")
	f.StringVar(&in.PageToken, "page-token", "", "continue from a LEGEND next_page_token")
	f.StringVar(&in.Contains, "contains", "", "keep chunks containing this text (case-insensitive)")
	f.BoolVar(&asJSON, "json", false, "print errors as JSON (kind, code, details, message)")
	return cmd
}

func newStoreTTLCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	var ttl, extend int
	cmd := &cobra.Command{
		Use:   "ttl TARGET (--ttl-minutes N | --extend-minutes N)",
		Short: "Set or extend an entry's time to live",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			in := store.TTLInput{Target: target(args, "")}
			if cmd.Flags().Changed("ttl-minutes") {
				in.TTLMinutes = &ttl
			}
			if cmd.Flags().Changed("extend-minutes") {
				in.ExtendMinutes = &extend
			}
			v, err := st.TTL(cmd.Context(), in)
			if err != nil {
				return storeError(io, true, err)
			}
			return writeJSON(io, map[string]any{"pack": v})
		},
	}
	sf.register(cmd)
	cmd.Flags().IntVar(&ttl, "ttl-minutes", 0, "new time to live, from now")
	cmd.Flags().IntVar(&extend, "extend-minutes", 0, "minutes added to expires_at")
	return cmd
}

func newStoreDeleteCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "delete TARGET",
		Short: "Delete an entry (a name must select exactly one)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			v, err := st.Delete(cmd.Context(), target(args, ""))
			if err != nil {
				return storeError(io, true, err)
			}
			return writeJSON(io, map[string]any{"deleted": v})
		},
	}
	sf.register(cmd)
	return cmd
}

// newStoreWriteCmd is "store write" or, with finalize, "store finalize":
// the same write with status finalized, of the current document when no
// --document is given.
func newStoreWriteCmd(io ioStreams, finalize bool) *cobra.Command {
	var sf storeFlags
	var document, status, name string
	var expected int
	var validateOnly bool
	use, short := "write [TARGET] --document FILE", "Write an entry's document (whole): update TARGET at --expected-revision, or create"
	if finalize {
		use, short = "finalize TARGET --expected-revision N [--document FILE]", "Finalize an entry: the finalize checklist must pass (scope, findings, qa.verdict, refs)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := store.WriteInput{Status: status, ValidateOnly: validateOnly}
			t := target(args, "")
			in.ID, in.Name = t.ID, t.Name
			if name != "" {
				if len(args) > 0 {
					return usageErr("--name names a new entry: give TARGET or --name, not both")
				}
				in.Name = name
			}
			if cmd.Flags().Changed("expected-revision") {
				in.ExpectedRevision = &expected
			} else if len(args) > 0 {
				return usageErr("updating %s needs --expected-revision (ctxpack store get %s shows the revision)", args[0], args[0])
			}
			if finalize {
				in.Status = store.StatusFinalized
				if len(args) == 0 {
					return usageErr("finalize needs TARGET")
				}
			}
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			switch {
			case document != "":
				if in.Document, err = readDocument(io.In, document); err != nil {
					return err
				}
			case finalize:
				cur, err := st.Get(cmd.Context(), t)
				if err != nil {
					return storeError(io, true, err)
				}
				if in.Document, err = cur.Document.MarshalJSON(); err != nil {
					return err
				}
			default:
				return usageErr("--document FILE (or - for standard input) is required")
			}
			res, err := st.Write(cmd.Context(), in)
			if err != nil {
				return storeError(io, true, err)
			}
			return writeJSON(io, res)
		},
	}
	sf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&document, "document", "", "the whole document: a JSON object of sections (scope, findings, qa…); - for standard input")
	f.IntVar(&expected, "expected-revision", 0, "the revision the update is based on")
	f.BoolVar(&validateOnly, "validate-only", false, "run every check and write nothing")
	if !finalize {
		f.StringVar(&status, "status", "", "draft or finalized (default: keep the entry's)")
		f.StringVar(&name, "name", "", "name of a new entry (create)")
	}
	return cmd
}

func newStoreImportCmd(io ioStreams) *cobra.Command {
	var sf storeFlags
	var name string
	cmd := &cobra.Command{
		Use:   "import PATH",
		Short: "Store a pack and its record: an Action artifact (zip or directory) or a pack file",
		Long: `Import stores a pack with its transparency record. PATH is the artifact zip
the Action uploaded (as downloaded), a directory holding pack.json and
pack.record.json (the Action's .ctxpack-action, an unzipped artifact), or a
pack file whose record is FILE.record.json or pack.record.json beside it.
The store checks what it is given, fail-closed: a valid pack whose id matches
its content, its own record with a passing verdict, and a fresh secret scan of
every string. --name defaults to pr-<n> for a pull request ref, else
<repo>@<ref>.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := store.ReadArtifact(args[0])
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			in.Name = name
			st, err := sf.open(os.Getenv)
			if err != nil {
				return err
			}
			res, err := st.Put(cmd.Context(), in)
			if err != nil {
				return storeError(io, true, err)
			}
			return writeJSON(io, res)
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "entry name (default pr-<n> or <repo>@<ref>)")
	return cmd
}
