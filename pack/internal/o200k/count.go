package o200k

import (
	"encoding/binary"
	"sync/atomic"
)

// noRank marks a pair of parts that no token merges.
const noRank = ^uint32(0)

// heapFrom is the piece length from which Count finds each merge in a heap
// instead of by a scan over the pairs (quadratic, but faster on the short
// pieces that nearly all are).
const heapFrom = 64

// Count is the number of tokens byte-pair encoding cuts one o200k_base
// pre-tokenizer piece into: starting from its bytes, the adjacent pair of
// parts whose concatenation has the lowest rank is merged, the leftmost of
// equals first, until no pair is a token. Every byte is a token, so each
// part is one.
func Count(piece string) int {
	if len(piece) <= 1 {
		return len(piece)
	}
	if _, ok := Rank(piece); ok {
		return 1
	}
	if len(piece) < heapFrom {
		return countScan(piece)
	}
	return countHeap(piece)
}

// pairRank is the rank of s, or noRank.
func pairRank(s string) uint32 {
	if r, ok := Rank(s); ok {
		return r
	}
	return noRank
}

// countScan merges by scanning the pairs for the lowest rank each time.
// at[i] is where part i begins (at[parts] = len(piece)); rank[i] is the
// rank of parts i and i+1 merged. The first ranks, of two bytes, are read
// from pairRanks: half of the lookups of a short piece.
func countScan(piece string) int {
	var atBuf [heapFrom + 1]int32
	var rankBuf [heapFrom]uint32
	parts := len(piece)
	at, rank := atBuf[:parts+1], rankBuf[:parts]
	for i := range at {
		at[i] = int32(i)
	}
	for i := range parts - 1 {
		rank[i] = bytePairRank(piece[i], piece[i+1])
	}
	rank[parts-1] = noRank
	// pair is the rank of parts i and i+1, when both exist.
	pair := func(i int) uint32 {
		if i+2 > parts {
			return noRank
		}
		return pairRank(piece[at[i]:at[i+2]])
	}
	for parts > 1 {
		best := 0
		for i := 1; i < parts-1; i++ {
			if rank[i] < rank[best] {
				best = i
			}
		}
		if rank[best] == noRank {
			break
		}
		// Part best+1 joins part best.
		copy(at[best+1:], at[best+2:parts+1])
		copy(rank[best+1:], rank[best+2:parts])
		parts--
		rank[best] = pair(best)
		if best > 0 {
			rank[best-1] = pair(best - 1)
		}
	}
	return parts
}

// countHeap merges as countScan does, keeping the parts in a linked list
// and the candidate merges in a heap ordered by rank, then position.
func countHeap(piece string) int {
	n := int32(len(piece))
	next := make([]int32, n+1) // where the part after the one at i begins; -1 past the end
	prev := make([]int32, n+1)
	rank := make([]uint32, n+1) // of the part at i merged with the next; noRank when none, or i is no longer a part's start
	for i := range n + 1 {
		next[i], prev[i], rank[i] = i+1, i-1, noRank
	}
	next[n] = -1
	pair := func(i int32) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		return pairRank(piece[i:next[j]])
	}
	h := make(mergeHeap, 0, n)
	for i := range n - 1 {
		if rank[i] = pair(i); rank[i] != noRank {
			h = append(h, merge{rank[i], i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		m := h.pop()
		if rank[m.at] != m.rank {
			continue // stale: a merge around it changed the pair
		}
		i, j := m.at, next[m.at]
		k := next[j]
		rank[j] = noRank
		next[i] = k
		if k >= 0 {
			prev[k] = i
		}
		parts--
		for _, b := range [2]int32{i, prev[i]} {
			if b < 0 {
				continue
			}
			if rank[b] = pair(b); rank[b] != noRank {
				h.push(merge{rank[b], b})
			}
		}
	}
	return parts
}

// merge is a candidate: the part at offset at merged with the next one
// into the token of rank rank.
type merge struct {
	rank uint32
	at   int32
}

// mergeHeap is a binary min-heap of merges, lowest rank first, then
// leftmost.
type mergeHeap []merge

func (h mergeHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].at < h[b].at
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(m merge) {
	*h = append(*h, m)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *mergeHeap) pop() merge {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Cache remembers the counts of short pieces (up to 15 bytes, most of a
// text's) in direct-mapped tables a worker keeps: one load where Count
// reads the vocabulary's index, offsets and bytes, scattered over 4 MB.
// A piece's count (at most its length) is kept in the same word as its
// bytes, so that a hit reads one cache line; the tables are by length, so
// that the many pieces of 3 to 7 bytes take 8 bytes each, and the two-byte
// ones (a quarter of a source text's pieces) are counted from the
// package's table of the byte pairs' ranks (pairRanks). The zero Cache
// remembers nothing.
type Cache struct {
	// words holds pieces of 3 to 7 bytes (wordKey) and long those of 8 to
	// 15 (longKey; a quarter as many slots: prometheus' pack has 18,000
	// distinct ones where it has 55,000 shorter), each with its count in
	// the top four bits of its last word; zero: empty.
	words []uint64
	long  [][2]uint64
	shift uint // 64 - log2(len(words)); long's is shift + 2
}

// countShift places a count in a key's top four bits, above its length.
const countShift = 60

// The sizes of a Cache, as powers of two: a small one (128 KiB of 3- to
// 7-byte pieces) for the short texts a change pack counts again and
// again, a large one (512 KiB) for a large pack, whose pieces are many
// more (prometheus' full-tree pack: 5.7 million pieces, 77,000 distinct
// short ones). Laid out this way (a count beside its key, tables by
// length, the pairs' ranks kept) BenchmarkCountTokensFile -cpu 1 counts
// that pack at ~60 MB/s where one table of 16-byte keys and a table of
// counts beside it counted ~44, hugo's (11.5 MB) at ~45 where ~32.
const (
	SmallCache = 14
	LargeCache = 16
)

// NewCache returns an empty Cache of 1<<bits slots for pieces of 3 to 7
// bytes (a quarter as many for longer ones), whose memory has been
// written once. A new Cache is fresh memory from the kernel, and Count
// reads a slot before it writes it: a page first read is mapped to the
// shared zero page, and the write that follows copies it and flushes the
// other cores' TLBs (an interprocessor interrupt each). Written first,
// each page is faulted in once (hugo's 1-file range: 3.1% of ctxpack's
// CPU in those copies, 80.2 → 77.5 ms task-clock).
func NewCache(bits int) *Cache {
	n := 1 << bits
	c := &Cache{words: make([]uint64, n), long: make([][2]uint64, n>>2), shift: uint(64 - bits)}
	const page = 4096
	for i := 0; i < n; i += page / 8 {
		c.words[i] = 0
	}
	for i := 0; i < len(c.long); i += page / 16 {
		c.long[i][0] = 0
	}
	return c
}

// wordKey is a piece of 3 to 7 bytes, little-endian, with its length in
// the top byte: read as two overlapping loads where it has four bytes.
func wordKey(piece string) uint64 {
	n := len(piece)
	var k uint64
	if n >= 4 {
		k = uint64(binary.LittleEndian.Uint32([]byte(piece[:4]))) | uint64(binary.LittleEndian.Uint32([]byte(piece[n-4:])))<<(8*(n-4))
	} else {
		k = uint64(piece[0]) | uint64(piece[1])<<8 | uint64(piece[2])<<16
	}
	return k | uint64(n)<<56
}

// longKey is a piece of 8 to 15 bytes, little-endian in two words, and its
// length in the second's top byte: the bytes past 8 read as the word
// ending at the piece's end, shifted down.
func longKey(piece string) [2]uint64 {
	n := len(piece)
	return [2]uint64{
		binary.LittleEndian.Uint64([]byte(piece[:8])),
		binary.LittleEndian.Uint64([]byte(piece[n-8:]))>>(8*(16-n)) | uint64(n)<<56,
	}
}

// Count is Count(piece), remembered for a short piece.
func (c *Cache) Count(piece string) int {
	n := len(piece)
	switch {
	case n <= 1 || n > 15 || c.words == nil:
		return Count(piece)
	case n == 2:
		if bytePairRank(piece[0], piece[1]) != noRank {
			return 1
		}
		return 2
	case n < 8:
		k := wordKey(piece)
		p := &c.words[(k*0x9e3779b97f4a7c15)>>c.shift]
		if *p&^(0xf<<countShift) == k {
			return int(*p >> countShift)
		}
		m := Count(piece)
		*p = k | uint64(m)<<countShift
		return m
	default:
		k := longKey(piece)
		p := &c.long[((k[0]^k[1]*0xff51afd7ed558ccd)*0x9e3779b97f4a7c15)>>(c.shift+2)]
		if p[0] == k[0] && p[1]&^(0xf<<countShift) == k[1] {
			return int(p[1] >> countShift)
		}
		m := Count(piece)
		*p = [2]uint64{k[0], k[1] | uint64(m)<<countShift}
		return m
	}
}

// pairRanks[a<<8|b] is the rank of the two bytes a, b plus one, noRank
// when they are no token, or 0 until looked up: a fact of the vocabulary,
// learnt once in a process by every counting goroutine (a racing lookup
// stores the same value). It gives a two-byte piece's count and the first
// merges of every longer piece a Cache misses.
var pairRanks [1 << 16]atomic.Uint32

// bytePairRank is pairRank of the two bytes a, b, through pairRanks.
func bytePairRank(a, b byte) uint32 {
	p := &pairRanks[uint16(a)<<8|uint16(b)]
	switch v := p.Load(); v {
	case 0:
		r := pairRank(string([]byte{a, b}))
		if r == noRank {
			p.Store(noRank)
		} else {
			p.Store(r + 1)
		}
		return r
	case noRank:
		return noRank
	default:
		return v - 1
	}
}
