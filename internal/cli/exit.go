package cli

// Exit codes, the errors that make them, the codes of signals, and the
// mark of a command line that is only checked (CheckArgs).

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unicode/utf8"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1   // the run could not be done (Redis unreachable, setup failed)
	exitUsage       = 2   // bad flags or arguments
	exitThresholds  = 3   // run: a --fail-on threshold failed; the results were written
	exitInvalidBase = 4   // compare, ab: the baseline itself is broken (InvalidBaseline); nothing was compared
	exitInterrupted = 130 // stopped by Ctrl-C (SIGINT); partial results were written
	exitSIGTERM     = 143 // stopped by SIGTERM (128 + 15), as by Ctrl-C
	exitSIGHUP      = 129 // stopped by SIGHUP (128 + 1: the terminal closed), as by Ctrl-C
)

// interruptCode is the exit of an interrupted run: 128 + the first
// signal's number (signalExit).
var interruptCode atomic.Int32

func init() { interruptCode.Store(exitInterrupted) }

// signalExit is the exit code of a run stopped by sig: the shell's 128 + n.
func signalExit(sig os.Signal) int {
	switch sig {
	case syscall.SIGTERM:
		return exitSIGTERM
	case syscall.SIGHUP:
		return exitSIGHUP
	}
	return exitInterrupted
}

// signalName names sig for the message the run prints on it.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return "interrupted"
}

// exitCodesDoc is the exit codes of lockbench run, for its --help.
const exitCodesDoc = `0 done, every threshold passed; 1 the run failed (Redis
unreachable, setup error; partial results are written with failed set); 2
bad input (nothing was started); 3 a --fail-on threshold failed (the results
were written); 130 interrupted by Ctrl-C (SIGINT), 143 by SIGTERM, 129 by
SIGHUP (the partial results are written, marked interrupted). A run that fails
or is interrupted keeps 1 or 130/143/129 whatever its thresholds.`

// usageError marks errors in the user's input (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func (e usageError) Unwrap() error { return e.err }

// quitting is set by a second Ctrl-C, which then exits the process.
var quitting atomic.Bool

// errInterrupted is returned by a run stopped by a signal.
var errInterrupted = errors.New("interrupted")

// errThresholds is returned (wrapped) by a run whose --fail-on thresholds
// did not all pass (exit 3).
var errThresholds = errors.New("thresholds failed")

// errRegressed makes compare exit 1.
var errRegressed = errors.New("regression")

// errInvalidBaseline makes compare and ab exit 4: the baseline shows
// violations or errors that its strategies promise not to have
// (report.InvalidBaseline), so nothing is compared.
var errInvalidBaseline = errors.New("invalid baseline")

// checkOnlyKey marks the context of a command line that is only checked
// (CheckArgs): run, sweep and merge return after validating it.
type checkOnlyKey struct{}

// checkOnly reports whether ctx is CheckArgs's: validate, then return
// without starting, reading or writing anything.
func checkOnly(ctx context.Context) bool {
	return ctx != nil && ctx.Value(checkOnlyKey{}) != nil
}

// maxValueInMessage is the longest word (a run of non-space characters,
// such as a quoted value) an error message prints whole, and
// maxLineInMessage its longest line: longer ones are cut (cutLong).
const (
	maxValueInMessage = 200
	maxLineInMessage  = 4000
)

// cutLong cuts what a message would echo at length: each word longer than
// maxValueInMessage bytes, then each line longer than maxLineInMessage,
// keeps its start and ends in "…(N bytes)", N the length cut from.
func cutLong(msg string) string {
	if len(msg) <= maxValueInMessage {
		return msg
	}
	var b strings.Builder
	for i, line := range strings.Split(msg, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		var l strings.Builder
		start := 0
		for j := 0; j <= len(line); j++ {
			if j < len(line) && line[j] != ' ' && line[j] != '\t' {
				continue
			}
			l.WriteString(cut(line[start:j], maxValueInMessage))
			if j < len(line) {
				l.WriteByte(line[j])
			}
			start = j + 1
		}
		b.WriteString(cut(l.String(), maxLineInMessage))
	}
	return b.String()
}

// cut keeps the first max bytes of s (whole UTF-8 characters) and notes
// the length of s: "aaaa…(10000000 bytes)".
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
