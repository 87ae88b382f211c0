// Package compose holds Docker Compose files for the server layouts
// lockbench runs on (standalone, five Redlock masters, master + replica +
// three Sentinels, a six-node Cluster), a Prometheus + Grafana stack and
// the Grafana dashboard over lockbench's --metrics-addr metrics. The Go
// code here is only the tests that load and check those files; see
// README.md in this folder for the matching lockbench command lines.
package compose
