//go:build linux

package supervisor

import (
	"reflect"
	"testing"
)

// TestWireRoundTrip: what the parent encodes is what the supervisor reads,
// bytes a shell or a parser would trip on included.
func TestWireRoundTrip(t *testing.T) {
	w := Wire{
		Path: "/usr/bin/python3", Args: []string{"python3", "-c", "print('a:b')", ""}, Env: []string{"PATH=/usr/bin", "X=1:2\n3"},
		Dir: "/work space", Namespaced: true, HandledFS: 1<<16 - 1, HandledNet: 3, Scoped: 3,
		Rules:    []Rule{{Path: "/usr", Access: 7}, {Path: "/tmp/a:b", Access: 1 << 15}},
		NetPorts: []uint64{8080}, ProxySocket: "/tmp/x/proxy.sock", ProxyPort: 0, MaxProcs: 256, MaxData: 2 << 30,
		Seccomp: []Filter{{Code: 0x20, K: 4}, {Code: 0x15, Jt: 1, Jf: 0, K: 0xc000003e}, {Code: 6, K: 0x7fff0000}},
	}
	got, err := Decode(Encode(w))
	if err != nil || !reflect.DeepEqual(got, w) {
		t.Fatalf("Decode(Encode(w)) = %+v, %v; want %+v", got, err, w)
	}
	for _, bad := range []string{"", "5:ab", "x:", "3:abc", "0:1:a"} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) accepted a broken wire", bad)
		}
	}
}

// FuzzDecode: no input makes Decode panic, and what it accepts encodes
// back to what it decodes from.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(Wire{Path: "/bin/true", Args: []string{"true"}}))
	f.Add("")
	f.Add("99999999999999999999:")
	f.Fuzz(func(t *testing.T, s string) {
		w, err := Decode(s)
		if err != nil {
			return
		}
		if again, err := Decode(Encode(w)); err != nil || !reflect.DeepEqual(again, w) {
			t.Fatalf("round trip of %q: %+v, %v", s, again, err)
		}
	})
}
