package strategies

import "runtime/debug"

// Library is implemented by lockers built on a lock library: Library
// returns the library's name and exact version as its ecosystem spells
// them (a Go module path and version, a Maven group:artifact, an npm or
// PyPI package). lockbench records them in the result
// (scenarios[].library), so that runs against two versions of a library
// can be told apart and compared.
type Library interface {
	Library() (name, version string)
}

// LibraryOf returns l's library and version (Library), or "", "".
func LibraryOf(l Locker) (name, version string) {
	if lb, ok := l.(Library); ok {
		return lb.Library()
	}
	return "", ""
}

// ModuleVersion returns the version of Go module path linked into this
// binary (runtime/debug.ReadBuildInfo; a replace directive's version when
// one applies), or fallback when the binary does not say (a build without
// module information). A lockbench built against another version of a
// lock library (go.mod's require, or `go build` with -modfile) reports
// that version.
func ModuleVersion(path, fallback string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fallback
	}
	for _, d := range bi.Deps {
		if d.Path != path {
			continue
		}
		if d.Replace != nil && d.Replace.Version != "" {
			return d.Replace.Version
		}
		if d.Version != "" && d.Version != "(devel)" {
			return d.Version
		}
	}
	return fallback
}
