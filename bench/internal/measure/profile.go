package measure

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// Profile starts the profiles p asks for and returns the function that
// writes them: a CPU profile of the whole run to p.CPUProfile, and a heap
// profile (allocations of the whole run, and what is live at the end) to
// p.MemProfile. A Go driver calls it first and the returned function
// last. Profiles are for finding where the time goes; bench/run never
// asks for them, so no figure it reports carries their cost.
func Profile(p *Params) (stop func()) {
	var cpu *os.File
	if p.CPUProfile != "" {
		f, err := os.Create(p.CPUProfile)
		if err != nil {
			Fatal("cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			Fatal("cpuprofile: %v", err)
		}
		cpu = f
	}
	if p.MemProfile != "" {
		runtime.MemProfileRate = 4096
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		HeapProfile(p)
	}
}

// HeapProfile writes the heap profile to p.MemProfile now, if asked for,
// and only once: a scenario whose point is what is live at one moment (the
// idle footprint) calls it at that moment, before Profile's stop would.
func HeapProfile(p *Params) {
	if p.MemProfile == "" || p.heapWritten {
		return
	}
	p.heapWritten = true
	f, err := os.Create(p.MemProfile)
	if err != nil {
		Fatal("memprofile: %v", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		Fatal("memprofile: %v", err)
	}
}
