package history

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// LockOp is the input of one Porcupine operation of the lock model
// (PorcupineModel).
type LockOp struct {
	Key     string
	Acquire bool // false: a release
	Shared  bool // the read side of a read-write lock
	Proc    int  // the process (index of its Part), for descriptions
}

// lockState is one lock key's state in the model.
type lockState struct {
	writer  bool
	readers int
}

// PorcupineModel is a read-write lock, partitioned by lock key, for
// github.com/anishathalye/porcupine (Anish Athalye's linearizability
// checker after Horn and Kroening's P-compositionality and the Wing &
// Gong / Lowe algorithm). Its state per key is (writer held, readers);
// an exclusive acquire is legal only when neither is held, a shared one
// when no writer is, a release when what it releases is held. Every
// operation's output is nil: a lock history has nothing to read back,
// only an order to respect.
var PorcupineModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		idx := map[string]int{}
		var out [][]porcupine.Operation
		for _, op := range h {
			k := op.Input.(LockOp).Key
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, nil)
			}
			out[i] = append(out[i], op)
		}
		return out
	},
	Init: func() any { return lockState{} },
	Step: func(state, input, _ any) (bool, any) {
		s, op := state.(lockState), input.(LockOp)
		switch {
		case op.Acquire && op.Shared:
			if s.writer {
				return false, s
			}
			s.readers++
		case op.Acquire:
			if s.writer || s.readers > 0 {
				return false, s
			}
			s.writer = true
		case op.Shared:
			if s.readers == 0 {
				return false, s
			}
			s.readers--
		default:
			if !s.writer {
				return false, s
			}
			s.writer = false
		}
		return true, s
	},
	DescribeOperation: func(input, _ any) string {
		op := input.(LockOp)
		verb := map[bool]string{true: "acquire", false: "release"}[op.Acquire]
		if op.Shared {
			verb += "-shared"
		}
		return fmt.Sprintf("p%d %s %s", op.Proc, verb, op.Key)
	},
	DescribeState: func(state any) string {
		s := state.(lockState)
		return fmt.Sprintf("writer=%v readers=%d", s.writer, s.readers)
	},
}

// PorcupineOperations exports the parts' sections (see Count for the
// clock they are put on) as Porcupine operations of PorcupineModel: per
// section an acquire whose call and return are its Enter ∓ u and a
// release whose call and return are its Leave ∓ u, u its process's clock
// uncertainty. The model is correct for these histories because an
// entry's Enter comes after the server granted the lock and its Leave
// before the release was sent (package doc): the true acquire and
// release points lie in those intervals, so a safe lock always has a
// legal linearization, and Porcupine answers Illegal only when no shift
// of the endpoints within the uncertainty removes every overlap. With
// u = 0 (one host) each operation is a point and the check is exact:
// Illegal if and only if two sections overlapped, touching ones (Leave =
// Enter) excepted, as in Count.
//
// Unlike Count, Porcupine also sees pairs within one process: histories
// whose processes ran one client each are where the two must agree.
// ClientId is the process's index times 1<<16 plus its client id.
// Errors: as Count's.
func PorcupineOperations(parts []Part) ([]porcupine.Operation, error) {
	c, err := Count(parts) // the clock and its checks
	if err != nil {
		return nil, err
	}
	var ops []porcupine.Operation
	for pi, p := range parts {
		for _, s := range p.Scenarios {
			base, u := p.Header.MonoBaseNS, p.Header.MonoErrNS
			if !c.SameClock {
				base, u = s.OffsetNS, s.UncertaintyNS
			}
			for _, e := range s.Entries {
				client := pi<<16 + int(e.Client)
				ops = append(ops,
					porcupine.Operation{ClientId: client, Input: LockOp{Key: e.Key, Acquire: true, Shared: e.Shared, Proc: pi},
						Call: e.Enter + base - u, Return: e.Enter + base + u},
					porcupine.Operation{ClientId: client, Input: LockOp{Key: e.Key, Shared: e.Shared, Proc: pi},
						Call: e.Leave + base - u, Return: e.Leave + base + u})
			}
		}
	}
	return ops, nil
}
