package auditlog

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Last is the last n entries (all when n <= 0).
func Last(entries []Entry, n int) []Entry {
	if n > 0 && len(entries) > n {
		return entries[len(entries)-n:]
	}
	return entries
}

// WriteJSON prints entries as JSON lines (`hush audit log --json`).
func WriteJSON(w io.Writer, entries []Entry) error {
	enc := json.NewEncoder(w)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints entries as a table for a person (`hush audit log`),
// times in the local zone; path is named when there are none.
func WriteTable(w io.Writer, entries []Entry, path string) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintf(w, "no decisions recorded yet (%s)\n", path)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTURN\tTOOL\tGATE\tDECISION\tBY")
	for _, e := range entries {
		by := e.Source
		if e.Rule != "" {
			by += ": " + e.Rule
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Turn, e.Tool, e.Gate, e.Decision, by)
	}
	return tw.Flush()
}
