package provider

import (
	"log"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
)

// SetUpProcess sets up a plugin process before it serves (main, and the
// benchmarks' minimal provider, so both run alike): logs off unless asked
// for, the collector's pace, and the CPU profile CPUProfileEnv asks for. The
// caller runs the returned stop once serving is over; it also hands the
// job records this process could not finish deleting to a detached process
// (driver.HandOffCleanups), so no command leaves one in Ray.
func SetUpProcess() (stop func()) {
	quietLogsUnlessAsked()
	collectLessOften()
	stopProfile := profileCPU()
	return func() {
		stopProfile()
		exe, err := os.Executable()
		if err == nil {
			err = driver.HandOffCleanups(exe)
		}
		if err != nil {
			log.Printf("cannot hand off the clean-up of job records (a later run deletes them): %v", err)
		}
	}
}

// FinishHandedOffCleanup runs the hand-off process when args (os.Args[1:])
// ask for it, and reports whether they did.
func FinishHandedOffCleanup(args []string) bool {
	if len(args) != 1 || args[0] != driver.HandOffArg {
		return false
	}
	if err := driver.FinishHandedOff(os.Stdin); err != nil {
		log.Printf("%s: %v", driver.HandOffArg, err)
	}
	return true
}

// quietLogsUnlessAsked turns the plugin SDK's and the provider's logs off
// when no TF_LOG* variable is set. The CLI shows provider logs only when one
// is, but the SDK writes every trace line anyway (JSON on stderr, which the
// CLI parses and drops): about 40% of the CPU of planning 50 clusters.
func quietLogsUnlessAsked() {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_LOG") || strings.HasPrefix(kv, "TF_ACC_LOG") {
			return
		}
	}
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_PROVIDER"} {
		_ = os.Setenv(name, "OFF")
	}
}

// gcPercent is the plugin's GOGC unless the environment sets one. A plugin
// process serves one CLI command, and its live heap is small next to what
// the framework's value conversions allocate on the way (every object is
// rebuilt once per attribute while planning): at Go's default of 100, the
// collector took about a third of the plugin's CPU when planning 50 clusters.
const gcPercent = 400

// gcMemoryLimit caps what gcPercent lets the heap grow to: above it the
// collector runs as often as it must (the 10,000-node data source), unless
// GOMEMLIMIT says otherwise.
const gcMemoryLimit = 1 << 30

// collectLessOften sets gcPercent and gcMemoryLimit where GOGC and
// GOMEMLIMIT do not.
func collectLessOften() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
}

// CPUProfileEnv names the file the plugin writes a CPU profile of its whole
// life to (runtime/pprof, for `go tool pprof`), when set: the benchmarks'
// profile of a plan (bench/README.md). Serve returns once the CLI has shut
// the plugin down (go-plugin's Shutdown RPC stops the gRPC server), which is
// where the profile is stopped and written; a plugin the CLI has to kill
// leaves an empty file.
// One CLI command may start the plugin more than once (the last to exit
// writes the file last); "%p" in the name becomes the process id, for one
// file per process.
const CPUProfileEnv = "RAY_TF_CPUPROFILE"

// profileCPU starts the CPU profile CPUProfileEnv asks for and returns what
// stops it.
func profileCPU() (stop func()) {
	name := os.Getenv(CPUProfileEnv)
	if name == "" {
		return func() {}
	}
	f, err := os.Create(strings.ReplaceAll(name, "%p", strconv.Itoa(os.Getpid())))
	if err != nil {
		log.Printf("%s: %v", CPUProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Printf("%s: %v", CPUProfileEnv, err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Printf("%s: %v", CPUProfileEnv, err)
		}
	}
}
