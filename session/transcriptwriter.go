package session

import (
	"fmt"
	"os"
	"sync"
)

// reportingWriter is a session's transcript file that tells the user the
// first time a write fails, instead of dropping it: on a full disk the
// transcript was written as 0 bytes while the run reported success. Each
// entry is one write; a short one is cut off again, so the file holds
// whole lines only and a later entry is not glued to a fragment.
type reportingWriter struct {
	f      *os.File
	notice func(string)
	once   sync.Once
}

func (w *reportingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err == nil {
		return n, nil
	}
	if n > 0 && n < len(p) {
		if st, serr := w.f.Stat(); serr == nil && st.Size() >= int64(n) {
			_ = w.f.Truncate(st.Size() - int64(n))
		}
	}
	w.once.Do(func() {
		if w.notice != nil {
			w.notice(fmt.Sprintf("the transcript %s could not be written (%v): this session's messages from here on are not saved", w.f.Name(), err))
		}
	})
	return n, err
}
