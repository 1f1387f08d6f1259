package vault

import (
	"maps"
	"testing"

	"github.com/joho/godotenv"
)

// FuzzEncodeValue: a value that round-trips alone (what Set checks) also
// round-trips inside a whole file, whatever its neighbours hold.
func FuzzEncodeValue(f *testing.F) {
	for _, s := range []string{
		"", "007", `ends"`, `C:\dir\`, `\`, `"`, "a\nb", "a\r\nb", "$A", "${A}", `\$A`, "'x'", " x ", "#", "a #b",
		"x\\\n", "\"a'b\\", "$(", "=", "export A=1",
	} {
		f.Add(s, `tail\`)
	}
	f.Fuzz(func(t *testing.T, v, w string) {
		_, okV := encodeValue("A", v)
		_, okW := encodeValue("B", w)
		m := map[string]string{"A": "a", "B": "b", "REF": "${A}$B", "Z": "z"}
		if okV {
			m["A"] = v
		}
		if okW {
			m["B"] = w
		}
		data, err := marshal(m)
		if err != nil {
			t.Fatalf("marshal of storable values %q: %v", m, err)
		}
		back, err := godotenv.UnmarshalBytes(data)
		if err != nil {
			t.Fatalf("file of storable values does not parse: %v\n%s", err, data)
		}
		if !maps.Equal(back, m) {
			t.Fatalf("file read back as %q, want %q\n%s", back, m, data)
		}
	})
}
