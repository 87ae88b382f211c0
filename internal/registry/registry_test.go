package registry

import (
	"errors"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("thing")
	r.Register("b", 2)
	r.Register("a", 1)
	if got := strings.Join(r.Names(), ","); got != "a,b" {
		t.Fatalf("Names = %s", got)
	}
	if v, err := r.Lookup("b", errors.New("x")); err != nil || v != 2 {
		t.Fatalf("Lookup b = %d, %v", v, err)
	}
	sentinel := errors.New("unknown thing")
	if _, err := r.Lookup("c", sentinel); !errors.Is(err, sentinel) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("Lookup c = %v", err)
	}
	for _, name := range []string{"", "a"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			r.Register(name, 9)
		}()
	}
}
