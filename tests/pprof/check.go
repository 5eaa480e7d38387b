// check: reads a pprof file with github.com/google/pprof/profile (the parser `go tool pprof`
// uses), runs CheckValid and prints what a test needs to compare with gp's input:
//
//	type samples/count            one line per sample type, in order
//	total samples/count 42        sum of each value column
//	period cpu/nanoseconds 10101010
//	counts samples=3 locations=4 functions=4 mappings=1
//	stack main;work;leaf 40       per unique root-first stack (inline frames expanded), column 0
//	label comm=sleep 40           per string label value, column 0
//	label pid=123 40              per num label value, column 0
//
// Lines are sorted within each group so the output is deterministic. Exit 1 on any error.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: check FILE.pb.gz")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fail(err)
	}
	p, err := profile.Parse(f)
	if err != nil {
		fail(err)
	}
	if err := p.CheckValid(); err != nil {
		fail(err)
	}
	report(p)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "check:", err)
	os.Exit(1)
}

func report(p *profile.Profile) {
	totals := make([]int64, len(p.SampleType))
	stacks := map[string]int64{}
	labels := map[string]int64{}
	for _, s := range p.Sample {
		for i, v := range s.Value {
			totals[i] += v
		}
		stacks[stackString(s)] += s.Value[0]
		for k, vs := range s.Label {
			for _, v := range vs {
				labels[k+"="+v] += s.Value[0]
			}
		}
		for k, vs := range s.NumLabel {
			for _, v := range vs {
				labels[fmt.Sprintf("%s=%d", k, v)] += s.Value[0]
			}
		}
	}
	for i, t := range p.SampleType {
		fmt.Printf("type %s/%s\n", t.Type, t.Unit)
		fmt.Printf("total %s/%s %d\n", t.Type, t.Unit, totals[i])
	}
	if p.PeriodType != nil {
		fmt.Printf("period %s/%s %d\n", p.PeriodType.Type, p.PeriodType.Unit, p.Period)
	}
	fmt.Printf("time_nanos %d duration_nanos %d\n", p.TimeNanos, p.DurationNanos)
	fmt.Printf("counts samples=%d locations=%d functions=%d mappings=%d\n",
		len(p.Sample), len(p.Location), len(p.Function), len(p.Mapping))
	for _, m := range p.Mapping {
		fmt.Printf("mapping %s build_id=%s functions=%v\n", m.File, m.BuildID, m.HasFunctions)
	}
	printSorted("stack", stacks)
	printSorted("label", labels)
}

// Root first: Location[0] is the leaf and, within a location, Line[0] is the innermost
// inlined function, so both lists are walked backwards.
func stackString(s *profile.Sample) string {
	var frames []string
	for i := len(s.Location) - 1; i >= 0; i-- {
		loc := s.Location[i]
		if len(loc.Line) == 0 {
			frames = append(frames, fmt.Sprintf("0x%x", loc.Address))
			continue
		}
		for j := len(loc.Line) - 1; j >= 0; j-- {
			frames = append(frames, loc.Line[j].Function.Name)
		}
	}
	return strings.Join(frames, ";")
}

func printSorted(prefix string, m map[string]int64) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s %s %d\n", prefix, k, m[k])
	}
}
