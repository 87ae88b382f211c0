package cli

// run's --clients: a count, or a client ramp inside the run (a shape of
// internal/arrival read as a client count over time).

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/engine"
)

// clientRampForms are the client ramps --clients takes besides a count.
const clientRampForms = "ramp:from=N1,to=N2,over=D or stages:[start=N0,]D1=N1,D2=N2,..."

// clientsValue is run's --clients (pflag.Value): a whole count
// (f.clients, f.clientShape nil), or a client ramp (parseClientShape:
// f.clientShape, f.clients its maximum). A value that is neither is
// refused as the flag is set, so a scenario file's clients: is checked
// even where the command line overrides it.
type clientsValue struct{ f *runFlags }

func (v clientsValue) String() string {
	if v.f.clientShape != nil {
		return v.f.clientShape.String()
	}
	return strconv.Itoa(v.f.clients)
}

func (v clientsValue) Type() string { return "N|ramp" }

func (v clientsValue) Set(s string) error {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err == nil {
		v.f.clients, v.f.clientShape = n, nil
		return nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return err
	}
	sh, err := parseClientShape(s)
	if err != nil {
		return err
	}
	v.f.clients, v.f.clientShape = engine.MaxClientsOf(sh), sh
	return nil
}

// parseClientShape reads a client ramp: ramp:from=N1,to=N2,over=D or
// stages:[start=N0,]D1=N1,... (the grammar of --rate's shapes, arrival.Parse,
// with client counts for rates). The count at each moment is the shape's
// value rounded (engine.ClientsAt); the ramp must reach 1 to maxClients
// clients.
func parseClientShape(s string) (*arrival.Shape, error) {
	name, _, _ := strings.Cut(s, ":")
	if name != "ramp" && name != "stages" {
		return nil, fmt.Errorf("want a client count (1 to %d) or a client ramp, %s", maxClients, clientRampForms)
	}
	sh, err := arrival.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("a client ramp: %w (the values are client counts: want %s)", err, clientRampForms)
	}
	if n := engine.MaxClientsOf(sh); n < 1 || n > maxClients {
		return nil, fmt.Errorf("a client ramp must reach 1 to %d clients, %s reaches %d", maxClients, s, n)
	}
	return sh, nil
}
