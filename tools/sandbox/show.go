package sandbox

import (
	"fmt"
	"io"
	"strings"
)

// Render prints `hush sandbox show`: tool's sandbox sb (nil: off by
// [unsafe] no_sandbox), the protections of st on this machine, then every
// mask with its reason.
func Render(w io.Writer, tool string, sb *Config, st State) error {
	if sb == nil {
		fmt.Fprintf(w, "# sandbox for %s: OFF ([unsafe] no_sandbox = true in config.toml)\n", tool)
		return nil
	}
	state := "on"
	switch {
	case st.LandlockOnly:
		state = "Landlock only: " + st.Reason
		if sb.Required {
			state += "; [sandbox] required = true, so it refuses to run"
		}
	case !st.Namespaces:
		state = "OFF: " + st.Reason
		if sb.Required {
			state += "; [sandbox] required = true, so it refuses to run"
		}
	}
	fmt.Fprintf(w, "# sandbox for %s: %s\n", tool, state)
	fmt.Fprintln(w, "# protections")
	for _, p := range st.Protections {
		mark := "on "
		if !p.On {
			mark = "OFF"
		}
		if p.Name == ProtectMounts && p.On && (!sb.Constructed || sb.Policy == nil) {
			p.Why = MountsMasks
		}
		if p.Name == ProtectNetwork && st.Namespaces && !sb.NoNetwork {
			mark, p.Why = "-- ", "network is on for this tool; [tools."+tool+"] network = \"none\" leaves it only a loopback interface"
		}
		fmt.Fprintf(w, "%s  %-18s %s\n", mark, p.Name, p.Why)
	}
	renderLimits(w, sb, st) // limits.go
	if st.LandlockOnly {
		if sb.Policy != nil {
			fmt.Fprintln(w, "# the allowlist world, which the Landlock rules below enforce")
			RenderView(w, sb.Policy.View())
		}
		return renderLandlock(w, sb)
	}
	if sb.Policy != nil && sb.Constructed {
		fmt.Fprintln(w, "# the tool's world, built from this list: nothing else of this machine is in it")
		RenderView(w, sb.Policy.View())
		RenderEnvLayer(w, sb) // envfs_linux.go
		return nil
	}
	if sb.Policy != nil {
		fmt.Fprintln(w, "# the allowlist world, not built: [sandbox] constructed = false gives tools the host's root with the masks further below")
		RenderView(w, sb.Policy.View())
	}
	all, err := sb.Masks.Masks()
	if err != nil {
		return err
	}
	var hidden, readOnly []Mask
	for _, m := range all {
		if m.ReadOnly {
			readOnly = append(readOnly, m)
		} else {
			hidden = append(hidden, m)
		}
	}
	list := func(masks []Mask) {
		for _, m := range masks {
			kind := "file"
			switch {
			case m.Link:
				kind = "link"
			case m.Dir:
				kind = "dir "
			}
			fmt.Fprintf(w, "%s  %s\n      %s\n", kind, m.Path, m.Reason)
		}
	}
	if st.Namespaces {
		fmt.Fprintf(w, "# hidden (%d)\n", len(hidden))
	} else {
		fmt.Fprintf(w, "# NOT hidden now: what the sandbox hides where the kernel allows it (%d)\n", len(hidden))
	}
	list(hidden)
	if len(readOnly) > 0 {
		if st.Namespaces {
			fmt.Fprintf(w, "# read-only: readable, not writable, not replaceable (%d)\n", len(readOnly))
		} else {
			// Landlock alone cannot do it: its rules grant access to a
			// tree, never take one file out of a tree they grant.
			fmt.Fprintf(w, "# NOT read-only now: what the sandbox makes read-only where the kernel allows its namespaces (%d)\n", len(readOnly))
		}
		list(readOnly)
	}
	if re := sb.Masks.Reopened(); len(re) > 0 {
		fmt.Fprintf(w, "# re-opened by [sandbox] allow (%d)\n", len(re))
		for _, m := range re {
			fmt.Fprintf(w, "      %s\n", m.Path)
		}
	}
	return nil
}

// renderLandlock prints what the Landlock world makes of sb's view: the
// paths as Landlock rules, and the entries it cannot give.
func renderLandlock(w io.Writer, sb *Config) error {
	dir := "."
	if s := sb.masks(); s != nil && s.project != "" {
		dir = s.project
	}
	v, err := landlockViewFor(dir, nil, sb, "<private home>", "<private tmp>")
	if err != nil {
		fmt.Fprintf(w, "# Landlock sandbox: refuses to start tools here: %v\n", err)
		return nil
	}
	list := func(title string, paths []string) {
		fmt.Fprintf(w, "# %s (%d)\n", title, len(paths))
		for _, p := range paths {
			fmt.Fprintf(w, "      %s\n", p)
		}
	}
	list("Landlock rules: read-only", v.Read)
	list("Landlock rules: read-write (HOME and TMPDIR are private dirs of this session)", v.Write)
	list("Landlock rules: devices", v.Devices)
	if len(v.Sockets) > 0 {
		list("unix sockets the tool may reach", v.Sockets)
	} else {
		fmt.Fprintln(w, "# unix sockets: none (seccomp refuses socket(AF_UNIX); socketpair and pipes work)")
	}
	fmt.Fprintf(w, "# NOT given here: inside a tree Landlock grants whole, which it cannot take a path out of or make read-only (%d)\n", len(v.Uncovered))
	for _, e := range v.Uncovered {
		what := e.Path
		if len(e.Names) > 0 {
			what = strings.Join(e.Names, ", ") + " at any depth below " + e.Path
		}
		fmt.Fprintf(w, "      %s  [%s, not enforced]\n      %s\n", what, e.Mode, e.Reason)
	}
	return nil
}
