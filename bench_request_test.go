package tack_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tack-run/tack"
)

// BenchmarkRequest is the round trip of a command that a session answers
// at once (get_state, Session.State), from the caller to its reply: what
// every command pays on top of its own work. passivation=on goes by id
// through the registry (WithPassivateAfter), as a runtime that passivates
// sends every command. parallel=8 has eight callers per core, as a burst
// of commands to many sessions has.
func BenchmarkRequest(b *testing.B) {
	defer settle(b)
	for _, passivate := range []bool{false, true} {
		var opts []tack.Option
		if passivate {
			opts = append(opts, tack.WithPassivateAfter(time.Hour))
		}
		name := map[bool]string{false: "passivation=off", true: "passivation=on"}[passivate]
		b.Run(name, func(b *testing.B) {
			rt := newBenchRuntime(b, opts...)
			s := spawn(b, rt, benchScript{Turns: []benchTurn{{Text: "hi"}}}.json(b))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.State(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parallel=8", func(b *testing.B) {
			rt := newBenchRuntime(b, opts...)
			sessions := make([]*tack.Session, 64)
			for i := range sessions {
				sessions[i] = spawn(b, rt, benchScript{Turns: []benchTurn{{Text: "hi"}}}.json(b))
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(8)
			next := make(chan int, 1)
			next <- 0
			b.RunParallel(func(pb *testing.PB) {
				i := <-next
				next <- i + 1
				s := sessions[i%len(sessions)]
				for pb.Next() {
					if _, err := s.State(ctx); err != nil {
						panic(fmt.Sprint(err))
					}
				}
			})
		})
	}
}
