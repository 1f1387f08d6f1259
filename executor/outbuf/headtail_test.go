package outbuf

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestHeadTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		head, tail int
		writes     []string
		want       string
		truncated  bool
	}{
		{"nothing written", 4, 4, nil, "", false},
		{"below limits", 4, 4, []string{"abc"}, "abc", false},
		{"fills head only", 4, 4, []string{"abcd"}, "abcd", false},
		{"exactly head+tail", 4, 4, []string{"abcdefgh"}, "abcdefgh", false},
		{"exactly head+tail, many writes", 4, 4, []string{"ab", "cde", "fgh"}, "abcdefgh", false},
		{"one over", 4, 4, []string{"abcdefghi"}, "abcd\n[... 1 bytes omitted ...]\nfghi", true},
		{"above", 4, 4, []string{"abcdefghij"}, "abcd\n[... 2 bytes omitted ...]\nghij", true},
		{"ring wraps", 4, 4, []string{"ab", "cdef", "ghijk", "lm"}, "abcd\n[... 5 bytes omitted ...]\njklm", true},
		{"write larger than tail", 2, 3, []string{"a", "bcdefghijklmnop", "q"}, "ab\n[... 12 bytes omitted ...]\nopq", true},
		{"write ends ring exactly", 2, 3, []string{"ab", "cde", "fgh"}, "ab\n[... 3 bytes omitted ...]\nfgh", true},
		{"no head", 0, 4, []string{"abcdef"}, "\n[... 2 bytes omitted ...]\ncdef", true},
		{"no tail", 4, 0, []string{"abc", "def"}, "abcd\n[... 2 bytes omitted ...]\n", true},
		{"negative sizes", -1, -1, []string{"abc"}, "\n[... 3 bytes omitted ...]\n", true},
		{"empty writes", 4, 4, []string{"", "ab", ""}, "ab", false},
		// "aé…€z": the head cut splits é, the tail cut splits €.
		{"rune boundaries", 2, 3, []string{"aébcdefgh€z"}, "a\n[... 12 bytes omitted ...]\nz", true},
		{"runes intact at cuts", 3, 4, []string{"aébcdefgh€z"}, "aé\n[... 7 bytes omitted ...]\n€z", true},
		{"four-byte rune cut", 1, 3, []string{"a", "xyz🎉"}, "a\n[... 7 bytes omitted ...]\n", true},
		{"no rune trimming when whole", 2, 2, []string{"é€"[:4]}, "é€"[:4], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := NewHeadTail(tt.head, tt.tail)
			var total int64
			for _, w := range tt.writes {
				mustWrite(t, h, []byte(w))
				total += int64(len(w))
			}
			if got := h.String(); got != tt.want {
				t.Errorf("String()\n got %q\nwant %q", got, tt.want)
			}
			if h.Total() != total {
				t.Errorf("Total = %d, want %d", h.Total(), total)
			}
			if h.Truncated() != tt.truncated {
				t.Errorf("Truncated = %t, want %t", h.Truncated(), tt.truncated)
			}
		})
	}
}

// TestHeadTailMemoryBound writes 256 MiB and checks after every write that
// the buffers never outgrow head and tail.
func TestHeadTailMemoryBound(t *testing.T) {
	t.Parallel()
	const head, tail = 4 << 10, 8 << 10
	h := NewHeadTail(head, tail)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4<<10) // 64 KiB
	sizes := []int{1, 100, 4095, 8192, 8193, len(chunk)}
	var total int64
	for i := 0; total < 256<<20; i++ {
		n := sizes[i%len(sizes)]
		mustWrite(t, h, chunk[:n])
		total += int64(n)
		if cap(h.head) > head || len(h.ring) > tail || cap(h.ring) > tail {
			t.Fatalf("after %d bytes: head cap %d, ring cap %d", total, cap(h.head), cap(h.ring))
		}
	}
	if h.Total() != total {
		t.Fatalf("Total = %d", h.Total())
	}
	s := h.String()
	if len(s) > head+tail+64 || !strings.Contains(s, " bytes omitted ...]") {
		t.Fatalf("String is %d bytes", len(s))
	}
}

// TestHeadTailWriteDoesNotAllocate is not parallel: AllocsPerRun counts
// the allocations of the whole process.
func TestHeadTailWriteDoesNotAllocate(t *testing.T) {
	h := NewHeadTail(4<<10, 8<<10)
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	mustWrite(t, h, chunk) // the buffers are allocated once, here
	if allocs := testing.AllocsPerRun(100, func() { _, _ = h.Write(chunk) }); allocs != 0 {
		t.Fatalf("Write allocates %.0f times per call", allocs)
	}
}

func TestHeadTailConcurrent(t *testing.T) {
	t.Parallel()
	h := NewHeadTail(16, 16)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				_, _ = h.Write([]byte("line of output\n"))
				_ = h.String()
			}
		})
	}
	wg.Wait()
	if h.Total() != 4*1000*15 {
		t.Fatalf("Total = %d", h.Total())
	}
	// Every write is the same line, so the order they landed in is moot.
	if got, want := h.String(), "line of output\nl\n[... 59968 bytes omitted ...]\n\nline of output\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
