package pack

import (
	"context"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ctxpack/ctxpack/lang"
)

// Bounds of the relations looked up for a change: the files read beyond
// the change and the items each relation may add.
const (
	maxRelationFiles = 60
	maxCallees       = 24
	maxCallers       = 24
	maxImports       = 12
	maxGrepWords     = 48
	// minCallerName: shorter names match too much to grep for.
	minCallerName = 4
)

// commonNames are method names so widespread that their callers say
// nothing about the change.
var commonNames = set("String", "Error", "Close", "Init", "init", "main", "Read", "Write", "Len", "Less", "Swap",
	"Get", "Set", "Run", "Start", "Stop", "Reset", "Next", "Open", "Load", "Save", "Name", "Type", "Value",
	"toString", "render", "setup", "__init__", "__str__", "__repr__", "constructor", "equals", "hashCode", "test",
	"Test", "MarshalJSON", "UnmarshalJSON", "ServeHTTP", "Handle", "Handler", "Validate", "Copy", "Clone", "Update",
	"Delete", "Create", "List", "Wait", "Done", "Lock", "Unlock", "Add", "Remove", "Format", "Parse", "Print")

// greppable reports whether name is worth looking up across the tree: a
// short name (get, all, end) is in most files of a repository and defined
// in few or none of them, so looking up its definition or its callers there
// reads and scans file after file for nothing.
func greppable(name string) bool { return len(name) >= minCallerName && identifier(name) }

// identifier reports whether name may be a name in code: a symbol named
// "anonymous function" is in none.
func identifier(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isWordByte(c) && c != '$' {
			return false
		}
	}
	return name != ""
}

// relations finds what the change touches beyond its own lines: the
// definitions its added lines call (callees), the definitions and tests
// that use the symbols it changes (callers, tests), and the files it
// imports and that import it. Files come from the snapshot, or from the
// head tree when the snapshot lists only the change scope.
func (b *builder) relations(ctx context.Context, states []*changeState) ([]*unit, error) {
	var called, changedSyms []string
	calledSeen, symSeen := map[string]bool{}, map[string]bool{}
	changedDirs := map[string]bool{}
	changedFile := map[string]bool{}
	var exts []string
	extSeen := map[string]bool{}
	for _, st := range states {
		changedFile[st.c.Path] = true
		if st.e == nil || changeKind(st) == 2 {
			continue
		}
		changedDirs[lang.DirOf(st.c.Path)] = true
		if x := path.Ext(st.c.Path); x != "" && !extSeen[x] {
			extSeen[x] = true
			exts = append(exts, x)
		}
		for _, n := range lang.CalledNames(addedText(st.hunks)) {
			if identifier(n) && !calledSeen[n] {
				calledSeen[n] = true
				called = append(called, n)
			}
		}
		if st.facts == nil || lang.IsTestPath(st.c.Path) {
			continue
		}
		for _, h := range st.hunks {
			if h.lo == 0 {
				continue
			}
			for _, s := range lang.Overlapping(st.facts.Symbols, h.lo, h.hi) {
				n := s.Short()
				if !greppable(n) || commonNames[n] || symSeen[n] || s.Kind == lang.KindVar {
					continue
				}
				symSeen[n] = true
				changedSyms = append(changedSyms, n)
			}
		}
	}
	if len(exts) == 0 {
		return nil, nil
	}
	words := append([]string{}, changedSyms...)
	var short []string
	for _, n := range called {
		if greppable(n) {
			words = append(words, n)
		} else {
			short = append(short, n)
		}
	}
	if len(words) > maxGrepWords {
		words = words[:maxGrepWords]
	}
	hits, err := b.grep(ctx, words, GrepOptions{Exts: exts})
	if err != nil {
		return nil, err
	}
	// A short name called is looked for in the changed files only (res.get
	// defined beside the lines calling it).
	for _, n := range short {
		for _, st := range states {
			if st.e != nil && changeKind(st) != 2 && len(wordLines(st.e.original, n)) > 0 {
				hits[n] = append(hits[n], st.c.Path)
			}
		}
	}
	r := &relationFinder{b: b, changedDirs: changedDirs, changedFile: changedFile, read: map[string]*entry{}}
	candidates, names := r.calleeCandidates(called, hits)
	b.ahead = b.extractAhead(ctx, candidates, names)
	defer func() {
		b.ahead.stop()
		b.ahead = nil
	}()
	var units []*unit

	// Callees: where the names the added lines call are defined — the
	// changed files themselves, their package, then anywhere.
	nCallees := 0
	for _, name := range called {
		if nCallees >= maxCallees {
			break
		}
		files := r.rankFiles(hits[name])
		for _, p := range files {
			if ok, err := r.mayDefine(ctx, p, name); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			e, err := r.entry(ctx, p)
			if err != nil {
				return nil, err
			}
			f := b.factsOf(p)
			if e == nil || f == nil {
				continue
			}
			defs := lang.Defined(f.Symbols, name)
			for _, s := range defs {
				if s.Kind == lang.KindVar {
					continue
				}
				units = append(units, relationUnit(e, s, classCallee, len(units), RelCalls, r.distance(p)))
				nCallees++
			}
			if len(defs) > 0 {
				break // the nearest definition is the one called
			}
		}
	}

	// Callers and tests: the definitions that use a changed symbol.
	nCallers := 0
	for _, name := range changedSyms {
		if nCallers >= maxCallers {
			break
		}
		perSymbol := 0
		for _, p := range r.rankFiles(hits[name]) {
			if perSymbol >= 6 || nCallers >= maxCallers {
				break
			}
			e, err := r.entry(ctx, p)
			if err != nil {
				return nil, err
			}
			f := b.factsOf(p)
			if e == nil || f == nil {
				continue
			}
			rel := RelCalledBy
			if lang.IsTestPath(p) {
				rel = RelTestOf
			}
			seen := map[string]bool{}
			for _, line := range wordLines(e.original, name) {
				s, ok := lang.Enclosing(f.Symbols, line, line)
				if !ok || seen[s.Name] || s.Short() == name || receiverMention(s, name, line) {
					continue
				}
				seen[s.Name] = true
				units = append(units, relationUnit(e, s, classCaller, len(units), rel, r.distance(p)))
				nCallers++
				perSymbol++
				if perSymbol >= 6 {
					break
				}
			}
		}
	}

	// Imports: the files the changed files import, as their heads (package
	// clause, imports, first definitions).
	resolver, err := r.resolver(ctx)
	if err != nil {
		return nil, err
	}
	imported := make([][]lang.Unit, len(states))
	for i, st := range states {
		if st.facts != nil {
			imported[i] = resolver.Resolve(st.c.Path, st.facts)
		}
	}
	// One file stands for a package; they are read first and scanned at
	// once, on every core: read and scanned one after the other, they were
	// most of a range's imports (hugo's: 6 files, ~10 ms).
	files, err := r.importFiles(ctx, imported, changedFile)
	if err != nil {
		return nil, err
	}
	if err := b.scanEntries(ctx, files); err != nil {
		return nil, err
	}
	for _, e := range files {
		// A scan that excludes a file (secrets.action exclude or fail) ran
		// as it was read: importFiles passed it over. Kept for safety.
		if e.row.Reason != "" {
			continue
		}
		units = append(units, headUnit(e, classImport, len(units), RelImports))
	}
	return units, nil
}

// importFiles reads the files whose heads relations sends for the
// packages the changed files import: one per package, at most maxImports,
// in the order of imported; the first of a package's files, not changed
// and not a test, that may leave as read. A file not scanned yet (its
// scan pending under secrets.action redact) may leave whatever its scan
// finds: a redaction never excludes it.
func (r *relationFinder) importFiles(ctx context.Context, imported [][]lang.Unit, changedFile map[string]bool) ([]*entry, error) {
	var out []*entry
	for _, units := range imported {
		for _, u := range units {
			if len(out) >= maxImports {
				return out, nil
			}
			for _, p := range u.Files {
				if changedFile[p] || lang.IsTestPath(p) {
					continue
				}
				e, err := r.file(ctx, p)
				if err != nil {
					return nil, err
				}
				if e != nil {
					out = append(out, e)
					break
				}
			}
		}
	}
	return out, nil
}

// relationUnit is the region of a definition related to the change: the
// whole definition, or its head when it is long.
func relationUnit(e *entry, s lang.Symbol, class, rank int, rel string, distance int) *unit {
	end := s.EndLine
	if end-s.Line+1 > relationHeadLines {
		end = s.Line + relationHeadLines - 1
	}
	return &unit{class: class, rank: rank, e: e, start: s.Line, end: end, symbol: s.Name, kind: s.Kind,
		rel: []string{rel}, distance: distance}
}

// headUnit is the head of a related file.
func headUnit(e *entry, class, rank int, rel string) *unit {
	n := lang.CountLines(e.original)
	return &unit{class: class, rank: rank, e: e, start: 1, end: min(n, relationHeadLines), rel: []string{rel}, distance: 1}
}

// receiverMention reports whether the mention of name at line is only the
// declaration of a method of the type name (func (r Redirect) Render): the
// method belongs to the type, it does not use it.
func receiverMention(s lang.Symbol, name string, line int) bool {
	return line == s.Line && strings.HasPrefix(s.Name, name+".")
}

// callLines returns the 1-based lines of text that call name as a method:
// "x.name(", where x is not one of the file's imported packages (http.Redirect
// is another package's function, not the method).
func callLines(text, name string, packages map[string]bool) []int {
	var out []int
	call := "." + name + "("
	for _, line := range wordLines(text, name) {
		lo, hi := lineSpan(text, line)
		l := text[lo:hi]
		for i := strings.Index(l, call); i >= 0; {
			j := i
			for j > 0 && isWordByte(l[j-1]) {
				j--
			}
			if !packages[l[j:i]] {
				out = append(out, line)
				break
			}
			k := strings.Index(l[i+1:], call)
			if k < 0 {
				break
			}
			i += 1 + k
		}
	}
	return out
}

// packageNames are the names a file's imports are used by: the last
// element of each import path (a guess a renamed import escapes).
func packageNames(f *lang.Facts) map[string]bool {
	out := map[string]bool{}
	for _, imp := range f.Imports {
		imp = strings.Trim(imp, `"'`)
		out[imp[strings.LastIndexAny(imp, "/.")+1:]] = true
	}
	return out
}

// lineSpan is the byte span of the 1-based line of text.
func lineSpan(text string, line int) (int, int) {
	lo := 0
	for i := 1; i < line; i++ {
		j := strings.IndexByte(text[lo:], '\n')
		if j < 0 {
			return len(text), len(text)
		}
		lo += j + 1
	}
	hi := strings.IndexByte(text[lo:], '\n')
	if hi < 0 {
		return lo, len(text)
	}
	return lo, lo + hi
}

// wordLines returns the 1-based lines of text holding word as a whole word.
func wordLines(text, word string) []int {
	if word == "" {
		return nil // an empty word is everywhere: no line holds it as a word
	}
	var out []int
	line := 1
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], word)
		if j < 0 {
			break
		}
		at := i + j
		line += strings.Count(text[i:at], "\n")
		end := at + len(word)
		if (at == 0 || !isWordByte(text[at-1])) && (end >= len(text) || !isWordByte(text[end])) {
			if len(out) == 0 || out[len(out)-1] != line {
				out = append(out, line)
			}
		}
		i = end
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// grep finds, for each word, the files holding it: through the head tree
// when the snapshot has one, else in the listed files' text.
func (b *builder) grep(ctx context.Context, words []string, opts GrepOptions) (map[string][]string, error) {
	if len(words) == 0 {
		return map[string][]string{}, nil
	}
	if b.snap.Tree != nil {
		return b.snap.Tree.Grep(ctx, words, opts)
	}
	out := map[string][]string{}
	for _, e := range b.entries {
		if e.row.Reason != "" || !hasExt(e.file.Path, opts.Exts) {
			continue
		}
		text := e.original
		if opts.IgnoreCase {
			text = strings.ToLower(text)
		}
		for _, w := range words {
			key := w
			if opts.IgnoreCase {
				key = strings.ToLower(w)
			}
			var found bool
			if opts.Substring {
				found = strings.Contains(text, key)
			} else {
				found = len(wordLines(text, key)) > 0
			}
			if found && !containsString(out[key], e.file.Path) {
				out[key] = append(out[key], e.file.Path)
			}
		}
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	return len(list) > 0 && list[len(list)-1] == s // paths are added in order
}

// hasExt reports whether p ends in one of exts (any, when there are none).
func hasExt(p string, exts []string) bool {
	for _, x := range exts {
		if path.Ext(p) == x {
			return true
		}
	}
	return len(exts) == 0
}

// MaySearchTree reports whether the change pack of changes is likely to
// search the head tree for relations: a changed file of source code or
// tests, not deleted, whose added lines call a name worth looking up
// (greppable). Only such files have their callers and callees looked up
// there (see relations); the symbols a change defines are searched for
// too, but knowing them takes a parse. A source that must list the tree
// for the search can start it early on this answer.
func MaySearchTree(changes []Change) bool {
	for _, c := range changes {
		if c.Status == "deleted" || !(lang.IsTestPath(c.Path) || isSourcePath(c.Path)) {
			continue
		}
		_, hunks := splitDiff(c.Diff)
		for _, n := range lang.CalledNames(addedText(hunks)) {
			if greppable(n) {
				return true
			}
		}
	}
	return false
}

// addedText is the added lines of hunks, without their "+".
func addedText(hunks []hunk) string {
	var added strings.Builder
	for _, h := range hunks {
		for _, l := range strings.SplitAfter(h.text, "\n") {
			if strings.HasPrefix(l, "+") {
				added.WriteString(l[1:])
			}
		}
	}
	return added.String()
}

// relationFinder reads the files relations need, within a bound.
type relationFinder struct {
	b           *builder
	changedDirs map[string]bool
	changedFile map[string]bool
	read        map[string]*entry
	res         *lang.Resolver
	definers    map[string]func(string) bool // see definer
}

// calleeCandidates are the files the callee lookup may ask mayDefine
// about, in the order it asks: each called name's files by rank, those
// whose facts are not known yet, at most maxRelationFiles; with the names
// each may be asked about.
func (r *relationFinder) calleeCandidates(called []string, hits map[string][]string) ([]string, map[string][]string) {
	var out []string
	names := map[string][]string{}
	for _, name := range called {
		for _, p := range r.rankFiles(hits[name]) {
			if _, ok := names[p]; ok {
				names[p] = append(names[p], name)
				continue
			}
			if len(out) >= maxRelationFiles {
				continue // a name of a file already listed may still be asked
			}
			if _, ok := r.b.rawFacts[p]; ok {
				continue
			}
			if e := r.b.byPath[p]; e != nil && !e.pending {
				continue
			}
			out = append(out, p)
			names[p] = []string{name}
		}
	}
	return out, names
}

// factsAhead reads and extracts, on every core, the files the callee
// lookup will read, while it goes through them one after the other:
// extracting each file's facts only when mayDefine reached it was most of
// a range's relations (express: ~14 ms of Extract over 60 JavaScript
// files). The lookup still decides in its order what it reads, counts and
// lists (a file read ahead and never reached is not used); it takes a file
// read ahead as read (readEntry), and its facts only for the very text it
// then holds.
type factsAhead struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	files  map[string]*aheadFile
}

type aheadFile struct {
	done  chan struct{}
	file  File // from the head tree; Read nil when it was not read ahead
	data  []byte
	text  string
	may   func(name string) bool // lang.Definer of text
	facts *lang.Facts
}

// maxAheadBytes: a larger file is left to the lookup (it may be cut or
// excluded before any extraction).
const maxAheadBytes = 1 << 20

// readAheadOff turns the read-ahead off (tests compare packs built both ways).
var readAheadOff bool

func (b *builder) extractAhead(ctx context.Context, paths []string, names map[string][]string) *factsAhead {
	ctx, cancel := context.WithCancel(ctx)
	a := &factsAhead{cancel: cancel, files: make(map[string]*aheadFile, len(paths))}
	if len(paths) == 0 || b.snap.Tree == nil || readAheadOff {
		return a
	}
	for _, p := range paths {
		a.files[p] = &aheadFile{done: make(chan struct{})}
	}
	next := make(chan string, len(paths))
	for _, p := range paths {
		next <- p
	}
	close(next)
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for p := range next {
				af := a.files[p]
				if ctx.Err() == nil {
					b.readAhead(ctx, p, af, names[p])
				}
				close(af.done)
			}
		}()
	}
	return a
}

// readAhead reads p from the head tree and extracts its facts, unless it
// cannot define any of names (lang.MayDefine: the lookup then asks no
// more of it); nothing when it cannot read it (the lookup's own read then
// reports why).
func (b *builder) readAhead(ctx context.Context, p string, af *aheadFile, names []string) {
	f, ok, err := b.snap.Tree.File(ctx, p)
	if err != nil || !ok || f.Read == nil || f.Size > maxAheadBytes {
		return
	}
	data, err := f.Read(ctx)
	if err != nil || len(data) > maxAheadBytes {
		return
	}
	af.file, af.data = f, data
	af.text = string(data)
	af.may = lang.Definer(p, af.text)
	if slices.ContainsFunc(names, af.may) {
		af.facts = lang.Extract(p, af.text)
	}
}

// file returns p's file from the head tree as read ahead, waiting for it;
// false when it was not read ahead.
func (a *factsAhead) file(p string) (File, bool) {
	if a == nil {
		return File{}, false
	}
	af, ok := a.files[p]
	if !ok {
		return File{}, false
	}
	<-af.done
	if af.file.Read == nil {
		return File{}, false
	}
	f, data := af.file, af.data
	f.Read = func(context.Context) ([]byte, error) { return data, nil }
	return f, true
}

// facts returns the facts extracted ahead of p's text, waiting for them;
// nil when p was not extracted ahead or its text was another.
func (a *factsAhead) facts(p, text string) *lang.Facts {
	if af := a.readAs(p, text); af != nil {
		return af.facts
	}
	return nil
}

// definer returns lang.Definer of p's text as read ahead, waiting for it;
// nil when p was not read ahead or its text was another.
func (a *factsAhead) definer(p, text string) func(string) bool {
	if af := a.readAs(p, text); af != nil {
		return af.may
	}
	return nil
}

// readAs returns p as read ahead, waiting for it, when its text was text;
// nil when p was not read ahead or its text was another.
func (a *factsAhead) readAs(p, text string) *aheadFile {
	if a == nil {
		return nil
	}
	af, ok := a.files[p]
	if !ok {
		return nil
	}
	<-af.done
	if af.file.Read == nil || af.text != text {
		return nil
	}
	return af
}

// stop ends the extraction the lookup no longer needs.
func (a *factsAhead) stop() {
	a.cancel()
	a.wg.Wait()
}

// file reads a related file (at most maxRelationFiles of them), without
// scanning it.
func (r *relationFinder) file(ctx context.Context, p string) (*entry, error) {
	if e, ok := r.read[p]; ok {
		return e, nil
	}
	if len(r.read) >= maxRelationFiles {
		return nil, nil
	}
	e, err := r.b.readEntry(ctx, p)
	if err != nil {
		return nil, err
	}
	r.read[p] = e
	return e, nil
}

// entry reads and scans a related file; nil when it may not leave.
func (r *relationFinder) entry(ctx context.Context, p string) (*entry, error) {
	e, err := r.file(ctx, p)
	if err != nil || e == nil {
		return nil, err
	}
	if err := r.b.scanEntry(ctx, e); err != nil {
		return nil, err
	}
	if e.row.Reason != "" {
		return nil, nil
	}
	return e, nil
}

// mayDefine reports whether the file at p may define name, before it is
// scanned: most files holding a common name (join, send, request) define
// nothing of that name, and scanning each for secrets only to look was
// most of a range's relations (express: 60 files read, one sent). A file
// not yet scanned is answered from the facts of its unredacted text, which
// only say yes or no here and leave nothing; they stand for the facts of
// the scanned text when the scan found nothing to redact (rawFacts), and
// a redaction only replaces a secret, so it never adds a definition.
func (r *relationFinder) mayDefine(ctx context.Context, p, name string) (bool, error) {
	e, err := r.file(ctx, p)
	if err != nil || e == nil {
		return false, err
	}
	if !e.pending {
		return true, nil // scanned: its own facts answer
	}
	b := r.b
	f, ok := b.rawFacts[p]
	if !ok && !r.definer(p, e.original)(name) {
		return false, nil
	}
	if !ok {
		if f = b.ahead.facts(p, e.original); f == nil {
			f = lang.Extract(p, e.original)
		}
		if b.rawFacts == nil {
			b.rawFacts = map[string]*lang.Facts{}
		}
		b.rawFacts[p] = f
	}
	return len(lang.Defined(f.Symbols, name)) > 0, nil
}

// definer is lang.Definer of p's text, made once a file: the one read
// ahead, else its own.
func (r *relationFinder) definer(p, text string) func(string) bool {
	if d, ok := r.definers[p]; ok {
		return d
	}
	d := r.b.ahead.definer(p, text)
	if d == nil {
		d = lang.Definer(p, text)
	}
	if r.definers == nil {
		r.definers = map[string]func(string) bool{}
	}
	r.definers[p] = d
	return d
}

// distance is 1 for a file in a changed directory (the same package), 2
// elsewhere.
func (r *relationFinder) distance(p string) int {
	if r.changedDirs[lang.DirOf(p)] {
		return 1
	}
	return 2
}

// rankFiles orders grep hits: changed files, then their directories, then
// the rest, by path within each.
func (r *relationFinder) rankFiles(files []string) []string {
	out := append([]string(nil), files...)
	rank := func(p string) int {
		switch {
		case r.changedFile[p]:
			return 0
		case r.changedDirs[lang.DirOf(p)]:
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// resolver resolves the changed files' imports: over the snapshot's files,
// or, when the snapshot reaches a larger head tree, listing only the
// directories the imports name.
func (r *relationFinder) resolver(ctx context.Context) (*lang.Resolver, error) {
	if r.res != nil {
		return r.res, nil
	}
	b := r.b
	var readErr error
	goMod := func(p string) string {
		e, err := b.entryOf(ctx, p)
		if err != nil {
			readErr = err
			return ""
		}
		if e == nil {
			return ""
		}
		return e.analysis
	}
	known := make([]string, 0, len(b.entries))
	for _, e := range b.entries {
		known = append(known, e.file.Path)
	}
	if b.snap.Tree == nil {
		r.res = lang.NewResolver(known, goMod)
		return r.res, readErr
	}
	r.res = lang.NewLazyResolver(known, func(dir string) []string {
		ps, err := b.snap.Tree.Dir(ctx, dir)
		if err != nil {
			readErr = err
		}
		return ps
	}, goMod)
	return r.res, readErr
}
