package selftest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Render prints the matrix, the verdict, the cells' details and the risks.
func (r *Report) Render(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "PATH")
	for _, v := range Vectors {
		fmt.Fprint(tw, "\t"+strings.ToUpper(v))
	}
	fmt.Fprintln(tw)
	for _, row := range r.Rows {
		fmt.Fprint(tw, row.Path)
		for _, v := range Vectors {
			fmt.Fprint(tw, "\t"+row.Cells[v].Status)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(r.Attacks) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprint(tw, "ATTACK")
		for _, col := range AttackColumns {
			fmt.Fprint(tw, "\t"+strings.ToUpper(col))
		}
		fmt.Fprintln(tw)
		for _, row := range r.Attacks {
			fmt.Fprint(tw, row.Attack)
			for _, col := range AttackColumns {
				fmt.Fprint(tw, "\t"+row.Cells[col].Status)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if len(r.Protections) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SANDBOX HERE (namespaces refused)\tSTATE\tWHY")
		for _, p := range r.Protections {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Status, p.Why)
		}
		tw.Flush()
	}
	var notes []string
	for _, row := range r.Attacks {
		for _, col := range AttackColumns {
			c := row.Cells[col]
			if c.Detail != "" && c.Status != "pass" {
				notes = append(notes, fmt.Sprintf("  %s / %s: %s: %s", row.Attack, col, c.Status, c.Detail))
			}
		}
	}
	for _, row := range r.Rows {
		for _, v := range Vectors {
			c := row.Cells[v]
			if c.Detail != "" && c.Status != "pass" && c.Status != "n/a" {
				notes = append(notes, fmt.Sprintf("  %s / %s: %s: %s", row.Path, v, c.Status, c.Detail))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintf(w, "\n%s\n", r.Verdict)
	if len(r.Risks) > 0 {
		fmt.Fprintf(w, "\nConfiguration risks:\n")
		for _, risk := range r.Risks {
			fmt.Fprintf(w, "  - %s\n", risk)
		}
	}
}
