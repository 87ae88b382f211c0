package cli

// Run records: a run on the user's servers (--addr) says, before its
// first write there, which run id it writes under on which servers, in a
// small file that survives SIGKILL, so that lockbench clean --stale can
// find and remove the keys of runs that are gone.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runRecord is the record of one run process on the user's servers: a
// JSON file in the state directory (runsDir) and the same beside the
// result file (localRecordName). It holds no password and no user name.
type runRecord struct {
	RunID string `json:"run_id"`
	PID   int    `json:"pid"`
	Host  string `json:"host"`
	// BootID and ProcStart tell a live process from a later one with the
	// same pid (Linux: /proc/sys/kernel/random/boot_id, and field 22 of
	// /proc/<pid>/stat, clock ticks after boot); empty elsewhere.
	BootID    string `json:"boot_id,omitempty"`
	ProcStart string `json:"proc_start,omitempty"`
	StartedAt string `json:"started_at"` // RFC 3339, UTC
	// KeyPrefix is the namespace of every key the run writes.
	KeyPrefix string `json:"key_prefix"`
	// Out is the run's result file.
	Out     string         `json:"out,omitempty"`
	Servers []recordServer `json:"servers"`
	// path is where the record was read from (not in the file).
	path string
}

// recordServer is one set of servers of a run, with the connection
// settings clean needs beside the login: --addr (URLs without their
// login), the database, --cluster, --sentinel-master and the TLS flags.
type recordServer struct {
	Addr           string `json:"addr"`
	DB             int    `json:"db"`                 // informative: the URLs of Addr carry it
	Resource       bool   `json:"resource,omitempty"` // the --resource-addr server
	Cluster        bool   `json:"cluster,omitempty"`
	SentinelMaster string `json:"sentinel_master,omitempty"`
	TLS            bool   `json:"tls,omitempty"`
	TLSCA          string `json:"tls_ca_file,omitempty"`
	TLSCert        string `json:"tls_cert_file,omitempty"`
	TLSKey         string `json:"tls_key_file,omitempty"`
	TLSServerName  string `json:"tls_server_name,omitempty"`
	TLSInsecure    bool   `json:"tls_insecure_skip_verify,omitempty"`
}

// stateDir is lockbench's per-user state directory: $LOCKBENCH_STATE_DIR,
// else $XDG_STATE_HOME/lockbench, else ~/.local/state/lockbench. Error:
// no home directory.
func stateDir() (string, error) {
	if d := os.Getenv("LOCKBENCH_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "lockbench"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "lockbench"), nil
}

// runsDir is the state directory's runs/, where the run records are.
func runsDir() (string, error) {
	d, err := stateDir()
	return filepath.Join(d, "runs"), err
}

// recordFile is a record's file name: <run-id>-<pid>.json (the processes
// of a run of segments share a run id).
func (rec *runRecord) recordFile() string { return fmt.Sprintf("%s-%d.json", rec.RunID, rec.PID) }

// localRecordName is the record's copy beside the result file out:
// .lockbench-run-<run-id>-<pid>.json in out's directory.
func (rec *runRecord) localRecordName() string {
	return filepath.Join(filepath.Dir(rec.Out), ".lockbench-run-"+rec.recordFile())
}

// procIdentity is a process's boot id and start time (Linux), or "" "".
func procIdentity(pid int) (boot, start string) {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return strings.TrimSpace(string(b)), ""
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	if f := strings.Fields(s[i+1:]); i > 0 && len(f) > 19 {
		start = f[19] // field 22: starttime
		if f[0] == "Z" {
			start = "" // a zombie has exited
		}
	}
	return strings.TrimSpace(string(b)), start
}

// alive reports whether the record's process is still running on this
// host: its pid runs, started at the recorded time, since the recorded
// boot. A record of another host is taken as alive (it cannot be told).
func (rec *runRecord) alive(host string) bool {
	if rec.Host != host {
		return true
	}
	boot, start := procIdentity(rec.PID)
	if start == "" {
		return false
	}
	if rec.BootID != "" && boot != "" && rec.BootID != boot {
		return false
	}
	return rec.ProcStart == "" || rec.ProcStart == start
}

// newRunRecord is the record of this process's run runID on the servers
// of p (nil when the run uses only servers it starts itself, or when
// $LOCKBENCH_NO_RUN_RECORD=1: the children of --procs on the servers
// their parent started).
func newRunRecord(p *plan, f *runFlags, runID string) *runRecord {
	if len(p.addrs) == 0 || os.Getenv("LOCKBENCH_NO_RUN_RECORD") == "1" {
		return nil
	}
	host, _ := os.Hostname()
	boot, start := procIdentity(os.Getpid())
	rec := &runRecord{RunID: runID, PID: os.Getpid(), Host: host, BootID: boot, ProcStart: start,
		StartedAt: time.Now().UTC().Format(time.RFC3339), KeyPrefix: "lockbench:" + runID + ":", Out: p.out}
	if abs, err := filepath.Abs(p.out); err == nil {
		rec.Out = abs
	}
	srv := func(addr string, resource bool) recordServer {
		var items []string
		for _, a := range splitList(addr) {
			items = append(items, withoutLogin(a))
		}
		s := recordServer{Addr: strings.Join(items, ","), DB: p.conn.DB, Resource: resource, TLS: f.tls, TLSCA: f.tlsCA,
			TLSCert: f.tlsCert, TLSKey: f.tlsKey, TLSServerName: f.tlsServerName, TLSInsecure: f.tlsInsecure}
		if !resource {
			s.Cluster, s.SentinelMaster = f.cluster, f.sentinelMaster
		}
		return s
	}
	rec.Servers = append(rec.Servers, srv(f.addr, false))
	if p.resource != nil && f.resourceAddr != "" {
		rec.Servers = append(rec.Servers, srv(f.resourceAddr, true))
	}
	return rec
}

// save writes the record, durably (written, fsynced, renamed, the
// directory fsynced), beside the result file and in the state directory.
// The copy beside the result file must be written (error); one that
// cannot be written in the state directory is a warning on w.
func (rec *runRecord) save(w io.Writer) error {
	if rec == nil {
		return nil
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := writeDurable(rec.localRecordName(), b); err != nil {
		return fmt.Errorf("record the run beside its result file: %w", err)
	}
	dir, err := runsDir()
	if err == nil {
		err = writeDurable(filepath.Join(dir, rec.recordFile()), b)
	}
	if err != nil {
		fmt.Fprintf(w, "lockbench: warning: cannot record run %s in the state directory (%v); if it is killed, lockbench clean --stale --dir %s finds it\n",
			rec.RunID, err, filepath.Dir(rec.Out))
	}
	return nil
}

// remove removes the record's files: in the state directory, beside the
// result file, and where it was read from.
func (rec *runRecord) remove() {
	if rec == nil {
		return
	}
	if dir, err := runsDir(); err == nil {
		_ = os.Remove(filepath.Join(dir, rec.recordFile()))
	}
	if rec.Out != "" {
		_ = os.Remove(rec.localRecordName())
	}
	if rec.path != "" {
		_ = os.Remove(rec.path)
	}
}

// writeDurable writes b to path through a temporary file in its
// directory (created 0700 if missing), fsynced before the rename, and
// fsyncs the directory after it, so that the file survives a crash.
func writeDurable(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, tmpPrefix()+"*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs directory dir, so that the names just made in it last.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// readRecords reads the run records in dirs: the state directory's
// runs/ (*.json) and results directories (.lockbench-run-*.json), one
// per run process (the same record in two places counts once). Files
// that are not records are skipped.
func readRecords(dirs []string) []*runRecord {
	seen := map[string]bool{}
	var recs []*runRecord
	for i, dir := range dirs {
		pattern := "*.json"
		if i > 0 {
			pattern = ".lockbench-run-*.json"
		}
		names, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, name := range names {
			b, err := os.ReadFile(name)
			var rec runRecord
			if err != nil || json.Unmarshal(b, &rec) != nil || !runIDPattern.MatchString(rec.RunID) || rec.PID <= 0 ||
				rec.KeyPrefix != "lockbench:"+rec.RunID+":" || len(rec.Servers) == 0 {
				continue
			}
			rec.path = name
			if k := rec.recordFile(); !seen[k] {
				seen[k] = true
				recs = append(recs, &rec)
			}
		}
	}
	return recs
}

// connFlagsOf are clean's flags f (the login) with the record's servers
// s: what clean connects with (a database other than 0 is in s.Addr's
// URLs).
func (s recordServer) connFlagsOf(f *runFlags) *runFlags {
	g := *f
	g.addr, g.cluster, g.sentinelMaster = s.Addr, s.Cluster, s.SentinelMaster
	g.tls, g.tlsCA, g.tlsCert, g.tlsKey, g.tlsServerName, g.tlsInsecure = s.TLS, s.TLSCA, s.TLSCert, s.TLSKey, s.TLSServerName, s.TLSInsecure
	return &g
}
