package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

func TestFormats(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	if err := Write(&b, "csv", r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "naive" || rows[1][14] != "604" {
		t.Fatalf("csv rows %v, %v", rows, err)
	}
	b.Reset()
	if err := Write(&b, "benchstat", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "BenchmarkLock/naive/goredis/flash-sale/fixed-2\t300\t") || !strings.Contains(b.String(), "ops/s") {
		t.Fatalf("benchstat:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, "json", r); err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Scenarios) != 2 {
		t.Fatalf("json: %v", err)
	}
	if err := Write(&b, "yaml", r); err == nil {
		t.Fatal("yaml accepted")
	}
}
