package report

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HLOGName is the name of scenario i's (0-based) interval log beside the
// result file out (x.json): x-<i+1>-<strategy>-<driver>-<workload>.hlog,
// named as its .hgrm file is (WriteHGRM).
func HLOGName(out string, i int, s Scenario) string {
	return fmt.Sprintf("%s-%d-%s-%s-%s.hlog", strings.TrimSuffix(out, ".json"), i+1, s.Strategy, s.Driver, s.Workload)
}

// HLOGTag is the tag of a scenario's operation latency in its interval
// log: strategy/driver/workload/retry/clients (the retry with its
// parameters, as the result's retry field), with the characters a tag may
// not hold (commas, spaces, line breaks) replaced by ';' and '_'. Its
// acquire times carry the tag HLOGTag + "/acquire".
func HLOGTag(s Scenario) string {
	return strings.NewReplacer(",", ";", " ", "_", "\r", "_", "\n", "_").Replace(
		s.Strategy + "/" + s.Driver + "/" + s.Workload + "/" + s.Retry + "/" + strconv.Itoa(s.Clients))
}

// WriteHLOG writes, beside the result file out (x.json), one HdrHistogram
// interval log per scenario with interval histograms (Scenario.Intervals),
// named HLOGName, with hdrhistogram-go's HistogramLogWriter: a comment
// naming the scenario and the unit, the log format version, the
// scenario's start time, the legend, then for each timeline entry its
// operation latency histogram (tag HLOGTag) and its acquire histogram
// (tag HLOGTag + "/acquire"). Each interval line's start is s since the
// scenario's start (the timeline's t_s clock; the reader adds the
// StartTime line), its length the entry's. Values are µs, as lockbench
// records them; the writer reports each line's Interval_Max as the max
// / 1,000,000 (its fixed ratio, meant for ns -> ms), which for µs values
// is seconds. Scenarios without interval histograms are skipped. Errors:
// a histogram that does not decode, a file that cannot be written.
func WriteHLOG(out string, r *Run) error {
	for i, s := range r.Scenarios {
		iv := s.Intervals
		if iv == nil || len(iv.Op) != len(s.Timeline) || len(iv.Acquire) != len(s.Timeline) {
			continue
		}
		var b bytes.Buffer
		if err := writeHLOG(&b, s); err != nil {
			return fmt.Errorf("scenario %d: %w", i+1, err)
		}
		if err := os.WriteFile(HLOGName(out, i, s), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeHLOG(b *bytes.Buffer, s Scenario) error {
	iv, tag := s.Intervals, HLOGTag(s)
	w := hdrhistogram.NewHistogramLogWriter(b)
	if err := w.OutputComment(fmt.Sprintf("[lockbench interval log: %s; Tag=%s the operation's latency, Tag=%s/acquire the acquire time; values in microseconds]", s.Key(), tag, tag)); err != nil {
		return err
	}
	if err := w.OutputLogFormatVersion(); err != nil {
		return err
	}
	if err := w.OutputStartTime(iv.Start.UnixMilli()); err != nil {
		return err
	}
	if err := w.OutputLegend(); err != nil {
		return err
	}
	from := iv.WindowS
	for j, e := range s.Timeline {
		for _, h := range []struct {
			enc []byte
			tag string
		}{{iv.Op[j], tag}, {iv.Acquire[j], tag + "/acquire"}} {
			hist, err := hdrhistogram.Decode(h.enc)
			if err != nil {
				return fmt.Errorf("interval %d: %w", j+1, err)
			}
			hist.SetTag(h.tag)
			hist.SetStartTimeMs(int64(from*1000 + 0.5))
			hist.SetEndTimeMs(int64(e.TS*1000 + 0.5))
			if err := w.OutputIntervalHistogram(hist); err != nil {
				return err
			}
		}
		from = e.TS
	}
	return nil
}
