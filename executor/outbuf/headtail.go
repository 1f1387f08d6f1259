package outbuf

import (
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
)

// HeadTail keeps the first head and the last tail bytes written to it and
// counts the rest, so a 1 GiB tool output costs head+tail bytes of memory.
//
// It is safe for concurrent use, so a background tool's output can be read
// while the process is still writing it. Write never fails.
type HeadTail struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte // first bytes, up to headCap
	ring    []byte // last bytes, circular, allocated at tailCap when first needed
	next    int    // where the next tail byte goes in ring
	full    bool   // ring has wrapped: every byte of it is live
	total   int64
}

// NewHeadTail returns a HeadTail keeping head leading and tail trailing
// bytes; negative sizes count as 0.
func NewHeadTail(head, tail int) *HeadTail {
	return &HeadTail{headCap: max(head, 0), tailCap: max(tail, 0)}
}

// Write records p. It always returns len(p), nil.
func (h *HeadTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.total += int64(n)
	if room := h.headCap - len(h.head); room > 0 {
		k := min(room, len(p))
		if need := len(h.head) + k; need > cap(h.head) {
			// Grow with the output rather than allocating the whole head
			// up front: most tool calls print a few lines, and zeroing
			// 16 KiB per call showed up in the per-call overhead.
			h.head = slices.Grow(h.head, min(h.headCap, max(need, 2*cap(h.head), 512))-len(h.head))
		}
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || h.tailCap == 0 {
		return n, nil
	}
	if h.ring == nil {
		h.ring = make([]byte, h.tailCap)
	}
	if len(p) >= h.tailCap {
		copy(h.ring, p[len(p)-h.tailCap:])
		h.next, h.full = 0, true
		return n, nil
	}
	if k := copy(h.ring[h.next:], p); k < len(p) {
		copy(h.ring, p[k:])
	}
	h.next += len(p)
	if h.next >= h.tailCap {
		h.next -= h.tailCap
		h.full = true
	}
	return n, nil
}

// Total returns the number of bytes written in all.
func (h *HeadTail) Total() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// Truncated reports whether any byte was dropped.
func (h *HeadTail) Truncated() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total > int64(len(h.head)+h.tailLen())
}

func (h *HeadTail) tailLen() int {
	if h.full {
		return len(h.ring)
	}
	return h.next
}

// String returns everything written when it fit, and otherwise the head, a
// note of how many bytes were omitted, and the tail. The cut points are
// moved to rune boundaries so no UTF-8 character is split; the bytes that
// costs are counted as omitted.
func (h *HeadTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := make([]byte, 0, h.tailLen())
	if h.full {
		tail = append(tail, h.ring[h.next:]...)
	}
	tail = append(tail, h.ring[:h.next]...)
	if h.total <= int64(len(h.head)+len(tail)) {
		return string(h.head) + string(tail)
	}
	head := h.head[:completeRunesEnd(h.head)]
	tail = tail[continuationBytes(tail):]
	omitted := h.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", head, omitted, tail)
}

// completeRunesEnd returns the length of b without a trailing rune that the
// cut left incomplete.
func completeRunesEnd(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// continuationBytes counts the leading bytes of b that continue a rune
// begun before the cut.
func continuationBytes(b []byte) int {
	n := 0
	for n < len(b) && n < utf8.UTFMax-1 && !utf8.RuneStart(b[n]) {
		n++
	}
	return n
}
