package o200k

import "encoding/binary"

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
// rank of parts i and i+1 merged.
func countScan(piece string) int {
	var atBuf [heapFrom + 1]int32
	var rankBuf [heapFrom]uint32
	parts := len(piece)
	at, rank := atBuf[:parts+1], rankBuf[:parts]
	for i := range at {
		at[i] = int32(i)
	}
	for i := range parts - 1 {
		rank[i] = pairRank(piece[i : i+2])
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
// text's) in a direct-mapped table a worker keeps: two loads where Count
// reads the vocabulary's index, offsets and bytes, scattered over 4 MB.
// The zero Cache remembers nothing.
type Cache struct {
	keys   [][2]uint64 // piece bytes, length<<56 in the second; zero: empty
	counts []uint8
	shift  uint // 64 - log2(len(keys))
}

// The sizes of a Cache, as powers of two: a small one (256 KiB of keys)
// for the short texts a change pack counts again and again, a large one
// (1 MiB) for a large pack, whose pieces are many more: hugo's full-tree
// pack missed the small one for 5% of its short pieces, the large for
// 2.4%, and prometheus' (20 MB) was counted ~20% faster with the large
// (BenchmarkCountTokensFile, -cpu 1).
const (
	SmallCache = 14
	LargeCache = 16
)

// NewCache returns an empty Cache of 1<<bits slots whose memory has been
// written once. A new Cache is fresh memory from the kernel, and Count
// reads a slot before it writes it: a page first read is mapped to the
// shared zero page, and the write that follows copies it and flushes the
// other cores' TLBs (an interprocessor interrupt each). Written first,
// each page is faulted in once (hugo's 1-file range: 3.1% of ctxpack's
// CPU in those copies, 80.2 → 77.5 ms task-clock).
func NewCache(bits int) *Cache {
	n := 1 << bits
	c := &Cache{keys: make([][2]uint64, n), counts: make([]uint8, n), shift: uint(64 - bits)}
	const page = 4096
	for i := 0; i < n; i += page / 16 { // a key is 16 bytes
		c.keys[i][0] = 0
	}
	for i := 0; i < n; i += page {
		c.counts[i] = 0
	}
	return c
}

// cacheKey is a short piece's bytes, little-endian in two words, and its
// length in the second's top byte: read a word at a time where the piece
// has one (its bytes past 8, read as the word ending at its end, shifted
// down), byte by byte below 8.
func cacheKey(piece string) [2]uint64 {
	n := len(piece)
	var k [2]uint64
	if n >= 8 {
		k[0] = binary.LittleEndian.Uint64([]byte(piece[:8]))
		k[1] = binary.LittleEndian.Uint64([]byte(piece[n-8:])) >> (8 * (16 - n))
	} else {
		for i := 0; i < n; i++ {
			k[0] |= uint64(piece[i]) << (8 * i)
		}
	}
	k[1] |= uint64(n) << 56
	return k
}

// Count is Count(piece), remembered for a short piece.
func (c *Cache) Count(piece string) int {
	if len(piece) == 0 || len(piece) > 15 || len(c.keys) == 0 {
		return Count(piece)
	}
	k := cacheKey(piece)
	i := ((k[0] ^ k[1]*0xff51afd7ed558ccd) * 0x9e3779b97f4a7c15) >> c.shift
	if c.keys[i] == k {
		return int(c.counts[i])
	}
	n := Count(piece)
	c.keys[i], c.counts[i] = k, uint8(n)
	return n
}
