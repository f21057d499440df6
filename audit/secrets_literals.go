package audit

import "strings"

// literals finds, in one pass over a text, every occurrence of each of a
// set of strings: gitleaks' keywords (which rules its prefilter runs) and
// the rules' anchors (where their windows are). An Aho-Corasick trie walk
// for the keywords and a strings.Index per anchor each cost more than the
// pass; TestLiteralsMatchSearch compares it with both.
type literals struct {
	strs []string
	// pairs has bit p set when a group of strings starts with the pair of
	// bytes p: 8 KB the pass tests at every byte, where first, 256 KB,
	// would be read from beyond the L1 cache at every byte (~1 in 5 of a
	// text's pairs start a string).
	pairs [1 << 16 / 64]uint64
	// first maps a pair of bytes to the index + 1 of the group of strings
	// starting with it (0: none).
	first       []int32
	groups      []bigramGroup
	single      [256][]int32 // one-byte strings
	singleBytes []byte       // the bytes of the one-byte strings
	empty       []int32      // "" occurs everywhere
}

// bigramGroup holds the ids of the strings starting with one pair of
// bytes: of two bytes (pair) and longer (long), with the set of the
// longer ones' third bytes. A pair of a text starts a group's string about
// once in five bytes, and its third byte rules most of them out (hugo's
// tree: 0.54 string comparisons a byte without the test, 0.08 with it).
type bigramGroup struct {
	pair  []int32
	long  []int32
	third [4]uint64 // bit c: a long string's third byte is c
}

func newLiterals(strs []string) *literals {
	l := &literals{strs: strs, first: make([]int32, 1<<16)}
	for id, s := range strs {
		switch len(s) {
		case 0:
			l.empty = append(l.empty, int32(id))
		case 1:
			if len(l.single[s[0]]) == 0 {
				l.singleBytes = append(l.singleBytes, s[0])
			}
			l.single[s[0]] = append(l.single[s[0]], int32(id))
		default:
			b := int(s[0])<<8 | int(s[1])
			if l.first[b] == 0 {
				l.groups = append(l.groups, bigramGroup{})
				l.first[b] = int32(len(l.groups))
				l.pairs[b>>6] |= 1 << (b & 63)
			}
			g := &l.groups[l.first[b]-1]
			if len(s) == 2 {
				g.pair = append(g.pair, int32(id))
				continue
			}
			g.long = append(g.long, int32(id))
			g.third[s[2]>>6] |= 1 << (s[2] & 63)
		}
	}
	return l
}

// scan calls hit for every occurrence in text of every string whose id
// want holds (nil: every string), in the order of the occurrences' offsets.
func (l *literals) scan(text string, want []bool, hit func(id, at int)) {
	wants := func(id int32) bool { return want == nil || want[id] }
	for _, id := range l.empty {
		if wants(id) {
			for at := 0; at <= len(text); at++ {
				hit(int(id), at)
			}
		}
	}
	if len(l.singleBytes) > 0 {
		// The next offset of a one-byte string, by IndexByte when all of
		// them are one byte (credentialNeedles' "@"), not a lookup a byte.
		nextSingle := func(from int) int {
			if len(l.singleBytes) > 1 {
				for j := from; j < len(text); j++ {
					if len(l.single[text[j]]) > 0 {
						return j
					}
				}
				return len(text)
			}
			if j := strings.IndexByte(text[from:], l.singleBytes[0]); j >= 0 {
				return from + j
			}
			return len(text)
		}
		next := nextSingle(0)
		for i := 0; i < len(text); i++ {
			if i == next {
				for _, id := range l.single[text[i]] {
					if wants(id) {
						hit(int(id), i)
					}
				}
				next = nextSingle(i + 1)
			}
			if i+1 < len(text) {
				if p := int(text[i])<<8 | int(text[i+1]); l.pairs[p>>6]&(1<<(p&63)) != 0 {
					l.startingAt(text, i, wants, hit)
				}
			}
		}
		return
	}
	for i := 0; i+1 < len(text); i++ {
		if p := int(text[i])<<8 | int(text[i+1]); l.pairs[p>>6]&(1<<(p&63)) != 0 {
			l.startingAt(text, i, wants, hit)
		}
	}
}

// startingAt calls hit for each string of two bytes or more that starts at
// text[i:] and that wants.
func (l *literals) startingAt(text string, i int, wants func(int32) bool, hit func(id, at int)) {
	if i+1 >= len(text) {
		return
	}
	gi := l.first[int(text[i])<<8|int(text[i+1])]
	if gi == 0 {
		return
	}
	g := &l.groups[gi-1]
	for _, id := range g.pair {
		if wants(id) {
			hit(int(id), i)
		}
	}
	if i+2 >= len(text) {
		return
	}
	if c := text[i+2]; g.third[c>>6]&(1<<(c&63)) != 0 {
		for _, id := range g.long {
			s := l.strs[id]
			if s[2] == c && len(text)-i >= len(s) && text[i+3:i+len(s)] == s[3:] && wants(id) {
				hit(int(id), i)
			}
		}
	}
}
