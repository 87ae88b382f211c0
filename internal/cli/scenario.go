package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/internal/arrival"
	"github.com/lockbench/lockbench/internal/report"
)

// notInFile are run flags a scenario file cannot set.
var notInFile = map[string]bool{"file": true, "help": true}

// fileAliases are field names a scenario file may use for a flag:
// thresholds sets --fail-on (as k6 calls them).
var fileAliases = map[string]string{"thresholds": "fail-on"}

// stageFields are the scenario file's fields of k6-style stages, which
// together set --rate (stagesField): stages, a list of {duration, target},
// and start-rate, the rate the first stage starts from (default 0).
var stageFields = []string{"stages", "start-rate"}

// applyFile reads the YAML scenario file at path, a mapping whose keys are
// the run flags' long names (strategy, clients, ttl, fault, ...), and sets
// every flag of fs that the command line did not set (the command line
// wins). A value is a scalar, written as on the command line, or a list
// for a list flag (joined with commas) or a repeatable one (one value per
// item). Every problem is reported at once as a usage error, with the
// file and line: an unknown field (with the nearest flag name), a value
// the flag does not accept, a list for a flag of one value, a field given
// twice, or a file that cannot be read or is not a YAML mapping.
//
// A value the command line overrides is still checked, on scratch (a
// flag set of the same flags, thrown away): a file with clients: ten is
// wrong whatever the command line says. A number or true/false where a
// name is wanted (fault: 3) is refused.
func applyFile(fs, scratch *pflag.FlagSet, path string) error {
	root, err := readScenarioFile(path)
	if err != nil {
		return err
	}
	return applyFields(fs, scratch, path, root.Content)
}

// applyFields is applyFile on the fields of a mapping, content its key
// and value nodes in turn.
func applyFields(fs, scratch *pflag.FlagSet, path string, content []*yaml.Node) error {
	s := &fileApplier{fs: fs, scratch: scratch, path: path, names: fileFieldNames(fs),
		changed: map[string]bool{}, seen: map[string]bool{}}
	// Flags the command line set, before this file sets any.
	fs.Visit(func(f *pflag.Flag) { s.changed[f.Name] = true })
	for i := 0; i+1 < len(content); i += 2 {
		k, v := content[i], content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		s.field(k, v)
	}
	s.applyStages()
	if len(s.errs) > 0 {
		return usageError{errors.Join(s.errs...)}
	}
	return nil
}

// maxScenarioFile is the largest scenario file read: 16 MiB (one is a
// few KiB).
const maxScenarioFile = 16 << 20

// readScenarioFile reads and parses the scenario file at path: its root
// mapping node, or a usage error (unreadable, not a regular file, over
// maxScenarioFile, not YAML, empty, more than one YAML document, not a
// mapping).
func readScenarioFile(path string) (*yaml.Node, error) {
	raw, err := report.ReadBounded(path, maxScenarioFile)
	if err != nil {
		return nil, usageError{fmt.Errorf("scenario file: %w", err)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, usageError{fmt.Errorf("scenario file %s: %w", path, err)}
	}
	docs := 1
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, usageError{fmt.Errorf("scenario file %s: %w", path, err)}
		}
		docs++
	}
	if docs > 1 {
		return nil, usageError{fmt.Errorf("scenario file %s has %d YAML documents (separated by ---); lockbench reads one: give each its own file, or list them under scenarios: in one", path, docs)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, usageError{fmt.Errorf("scenario file %s is empty; it holds flag: value lines (lockbench run --help lists the flags)", path)}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, usageError{fmt.Errorf("scenario file %s:%d: want a mapping of flag: value lines (strategy: atomic), not a %s", path, root.Line, kindName(root))}
	}
	return root, nil
}

// fileFieldNames are the fields a scenario file may hold, sorted: the
// flags of fs it may set, the aliases and the stage fields.
func fileFieldNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !notInFile[f.Name] {
			names = append(names, f.Name)
		}
	})
	for alias := range fileAliases {
		names = append(names, alias)
	}
	names = append(names, stageFields...)
	sort.Strings(names)
	return names
}

// fileApplier is applyFile's state while it reads a file's fields.
type fileApplier struct {
	fs, scratch *pflag.FlagSet
	path        string
	names       []string        // the fields a file may hold (fileFieldNames)
	changed     map[string]bool // the flags the command line set
	seen        map[string]bool // the fields read so far
	errs        []error
	// stages and start-rate, applied after every other field (applyStages).
	stages, startRate, stagesKey *yaml.Node
}

// bad records a problem at n's line.
func (s *fileApplier) bad(n *yaml.Node, format string, a ...any) {
	s.errs = append(s.errs, fmt.Errorf("%s:%d: %s", s.path, n.Line, fmt.Sprintf(format, a...)))
}

// field reads one field, k: v, and sets its flag (on scratch when the
// command line set it), or keeps it for applyStages.
func (s *fileApplier) field(k, v *yaml.Node) {
	name := k.Value
	if k.Kind == yaml.ScalarNode && (name == "stages" || name == "start-rate") {
		if s.seen[name] {
			s.bad(k, "%s is given twice", name)
			return
		}
		s.seen[name] = true
		if name == "stages" {
			s.stages, s.stagesKey = v, k
		} else {
			s.startRate = v
		}
		return
	}
	if flag, ok := fileAliases[name]; ok {
		name = flag
	}
	fl := s.fs.Lookup(name)
	if k.Kind != yaml.ScalarNode || fl == nil || notInFile[name] {
		s.bad(k, "unknown field %q%s (fields are the run flags' names: %s)", name, suggest(name, s.names), strings.Join(s.names, ", "))
		return
	}
	if s.seen[name] {
		s.bad(k, "%s is given twice%s", k.Value, aliasNote(name))
		return
	}
	s.seen[name] = true
	vals, ok := s.values(fl, name, v)
	if !ok {
		return
	}
	if want, ok := nameFields[name]; ok {
		if n := firstNonString(v); n != nil {
			s.bad(n, "%s: want %s, not the %s %s", name, want, tagName(n), n.Value)
			return
		}
	}
	target := s.fs
	if s.changed[name] {
		// The command line wins; the file's value is still checked.
		target = s.scratch
	}
	for _, val := range vals {
		if target == nil {
			break
		}
		if err := target.Set(name, val); err != nil {
			s.bad(v, "%s: %v", name, err)
			break
		}
	}
}

// values are the flag values of field name's value v: a scalar, or a
// list joined (a list flag), split into one value per item (a repeatable
// flag) or kept whole (fail-on). ok is false after a problem.
func (s *fileApplier) values(fl *pflag.Flag, name string, v *yaml.Node) (vals []string, ok bool) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			s.bad(v, "%s has no value", name)
			return nil, false
		}
		return []string{v.Value}, true
	case yaml.SequenceNode:
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				s.bad(item, "%s: a list item must be a plain value", name)
				return nil, false
			}
			vals = append(vals, item.Value)
		}
		if len(vals) == 0 {
			s.bad(v, "%s is an empty list", name)
			return nil, false
		}
		switch {
		case name == "fail-on":
			// One threshold (or comma list of them) per item, as is.
		case fl.Value.Type() == "stringArray":
			// A flow list splits at every comma: [node-kill:node=2,at=1s]
			// is one fault, its parameters put back together (as --retry's).
			vals = splitRetry(strings.Join(vals, ","))
		case !isListFlag(fl):
			s.bad(v, "%s takes one value, not a list", name)
			return nil, false
		default:
			vals = []string{strings.Join(vals, ",")}
		}
		return vals, true
	default:
		s.bad(v, "%s: want a value or a list, not a %s", name, kindName(v))
		return nil, false
	}
}

// applyStages sets --rate from the file's stages and start-rate
// (stagesField), on scratch when the command line gave --rate.
func (s *fileApplier) applyStages() {
	switch {
	case s.stages != nil && s.seen["rate"]:
		s.bad(s.stagesKey, "stages and rate both set the arrival rate (--rate): give one")
	case s.stages != nil:
		if spec, ok := stagesField(s.stages, s.startRate, s.bad); ok {
			target := s.fs
			if s.changed["rate"] {
				target = s.scratch // the command line's --rate wins; the stages are still checked
			}
			if target != nil {
				if err := target.Set("rate", spec); err != nil {
					s.bad(s.stages, "stages: %v", err)
				}
			}
		}
	case s.startRate != nil:
		s.bad(s.startRate, "start-rate goes with stages (the rate the first stage starts from)")
	}
}

// stagesField reads a scenario file's stages (a list of {duration: D,
// target: R}, k6's ramping-arrival-rate stages) and start-rate (nil: 0)
// into --rate's form, stages:[start=R0,]D1=R1,..., and checks it as --rate
// does (arrival.Parse). Problems go to bad, with their line; ok is false
// after any.
func stagesField(stages, startRate *yaml.Node, bad func(*yaml.Node, string, ...any)) (spec string, ok bool) {
	ok = true
	fail := func(n *yaml.Node, format string, a ...any) {
		bad(n, format, a...)
		ok = false
	}
	start := ""
	if startRate != nil {
		if startRate.Kind != yaml.ScalarNode || (startRate.Tag != "!!int" && startRate.Tag != "!!float") {
			fail(startRate, "start-rate: want a rate in ops/s (a number), not %q", startRate.Value)
		}
		start = startRate.Value
	}
	if stages.Kind != yaml.SequenceNode || len(stages.Content) == 0 {
		fail(stages, "stages: want a list of {duration: D, target: R} (k6's stages), e.g. - {duration: 30s, target: 100}")
		return "", false
	}
	var list []arrival.Stage
	for _, item := range stages.Content {
		if item.Kind != yaml.MappingNode {
			fail(item, "stages: a stage is a mapping {duration: D, target: R}, not a %s", kindName(item))
			continue
		}
		var st arrival.Stage
		var hasD, hasT bool
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				fail(v, "stages: %s: want a plain value", k.Value)
				continue
			}
			switch k.Value {
			case "duration":
				if v.Tag != "!!str" {
					fail(v, "stages: duration: want a duration with its unit (30s, 1m), not the %s %s", tagName(v), v.Value)
				}
				st.Duration, hasD = v.Value, true
			case "target":
				if v.Tag != "!!int" && v.Tag != "!!float" {
					fail(v, "stages: target: want a rate in ops/s (a number), not %q", v.Value)
				}
				st.Target, hasT = v.Value, true
			default:
				fail(k, "stages: unknown key %q in a stage (keys: duration, target)", k.Value)
			}
		}
		if !hasD || !hasT {
			fail(item, "stages: a stage needs both duration and target")
		}
		list = append(list, st)
	}
	if !ok {
		return "", false
	}
	spec = arrival.StagesSpec(start, list)
	if _, err := arrival.Parse(spec); err != nil {
		fail(stages, "%v", err)
		return "", false
	}
	return spec, true
}

// aliasNote names the other field names of flag, for "given twice".
func aliasNote(flag string) string {
	for alias, f := range fileAliases {
		if f == flag {
			return fmt.Sprintf(" (%s and %s are one field)", alias, flag)
		}
	}
	return ""
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	}
	return "document"
}

// nameFields are the fields whose values are names (or name lists), with
// what they want: a YAML number or true/false there is a mistake.
var nameFields = map[string]string{
	"strategy": "strategy names", "driver": "driver names", "workload": "workload names",
	"retry": "NAME[:param=value,...]", "fault": "NAME[:param=value,...]", "topology": "a layout name",
	"format": "a format name", "backend": "local or docker", "arrivals": "constant or poisson",
	"guard": "a guard name", "token": "random or constant", "release": "detached or caller",
}

// firstNonString returns the first scalar of v (v itself, or a list
// item) that YAML reads as a number or a boolean, or nil.
func firstNonString(v *yaml.Node) *yaml.Node {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	for _, n := range items {
		switch n.Tag {
		case "!!int", "!!float", "!!bool":
			return n
		}
	}
	return nil
}

func tagName(n *yaml.Node) string {
	switch n.Tag {
	case "!!int", "!!float":
		return "number"
	}
	return "boolean"
}
