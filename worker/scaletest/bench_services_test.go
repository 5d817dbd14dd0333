package scaletest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// benchServices are the bench server's processes by name, from
// CARTWRIGHT_BENCH_SERVER_PIDS ("frontend=12,history=13,…,postgres=20",
// set by scripts/test.sh bench on a cluster: BENCH_TARGET=cluster), else
// the one dev server of CARTWRIGHT_BENCH_SERVER_PID. A name "postgres" is
// a PostgreSQL postmaster: its CPU is its own and its backends' (the
// connections of Temporal's persistence and visibility).
func benchServices() map[string]int {
	out := map[string]int{}
	if spec := os.Getenv("CARTWRIGHT_BENCH_SERVER_PIDS"); spec != "" {
		for _, kv := range strings.Split(spec, ",") {
			name, p, _ := strings.Cut(kv, "=")
			if pid, err := strconv.Atoi(p); err == nil {
				out[name] = pid
			}
		}
		return out
	}
	if pid, err := strconv.Atoi(os.Getenv("CARTWRIGHT_BENCH_SERVER_PID")); err == nil {
		out["Temporal dev server"] = pid
	}
	return out
}

// serverLabel names the bench's server in the table.
func serverLabel() string {
	if os.Getenv("CARTWRIGHT_BENCH_SERVER_PIDS") != "" {
		return "Temporal cluster (4 services + its PostgreSQL)"
	}
	return "Temporal dev server"
}

// serverCPUBy is the CPU time each of the bench server's processes has
// used so far.
func serverCPUBy() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range benchServices() {
		if name == "postgres" {
			out[name] = treeCPU(pid)
		} else {
			out[name] = procCPU(pid)
		}
	}
	return out
}

// perOrderBy is the CPU per workflow (ms) each process used between two
// snapshots.
func perOrderBy(before, after map[string]time.Duration, n int) map[string]float64 {
	out := map[string]float64{}
	for name, a := range after {
		out[name] = perOrder(a-before[name], n)
	}
	return out
}

// treeCPU is a postmaster's CPU: its own, its reaped children's, and that
// of the children alive now (PostgreSQL forks a backend per connection).
func treeCPU(pid int) time.Duration {
	total := procCPUWithChildren(pid)
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(rest) > 1 && rest[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			total += procCPU(child)
		}
	}
	return total
}

// procCPUWithChildren is utime+stime+cutime+cstime of pid (the children
// it waited for included).
func procCPUWithChildren(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(rest) <= 14 {
		return 0
	}
	var ticks int64
	for _, f := range rest[11:15] {
		n, _ := strconv.ParseInt(f, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func sumOf(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}
