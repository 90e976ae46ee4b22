package actors

import (
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// checkIfIdle checks the invariants if the session is idle.
func (p *prop) checkIfIdle() {
	if st := p.h.state(); st.State == "idle" {
		p.check(p.compacted(st))
	}
}

// compacted waits, when the session is idle with a compaction under way
// (the compact command in idle, or compact_at_percent at a run's end),
// for that compaction to end, which is the one change an idle session
// makes without a command; it returns get_state after it.
func (p *prop) compacted(st *eventsv1.SessionState) *eventsv1.SessionState {
	evs := p.h.rec.Events()
	starts, ends := len(findAll(evs, "compact_start")), len(findAll(evs, "compact_end"))
	if st.State != "idle" || starts == ends {
		return st
	}
	p.h.waitFor("compact_end", starts)
	return p.h.state()
}

// settle waits, run by run, until the session is idle. Ends are counted
// before get_state: if it says busy, the run's end is still to come.
func (p *prop) settle() {
	for {
		ends := len(findAll(p.h.rec.Events(), "agent_end"))
		if p.h.state().State == "idle" {
			return
		}
		p.h.waitFor("agent_end", ends+1)
	}
}

// check asserts the invariants of an idle session whose get_state is st.
// Idle, the session changes only on a command, so st, the history and the
// events agree.
func (p *prop) check(st *eventsv1.SessionState) {
	p.t.Helper()
	if st.State != "idle" || st.RunId != nil || len(st.RunningTools) != 0 {
		p.t.Fatalf("not idle: %v", st)
	}
	msgs := p.h.ok(&eventsv1.GetMessages{}).GetMessages().GetMessages()
	if err := llm.Validate(msgs); err != nil {
		p.t.Fatalf("history: %v", err)
	}
	all := p.h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	evs := p.h.rec.Events()
	for _, problem := range logProblems(evs) {
		p.t.Error(problem)
	}
	checkAll(p.t, p.h, evs)

	// Nothing lost: each accepted text is in exactly one place, once.
	where := map[string][]string{}
	for _, m := range all {
		place := "history"
		if m.RolledBack {
			place = "rolled_back"
		}
		texts := []string{m.Content}
		if p.all {
			texts = strings.Split(m.Content, QueueJoin)
		}
		for _, text := range texts {
			if m.Role == llm.RoleUser && !m.Summary {
				where[text] = append(where[text], place)
			}
		}
	}
	if rolled := len(all) - len(msgs); rolled < 0 {
		p.t.Errorf("get_messages all has %d messages, the history %d", len(all), len(msgs))
	}
	for _, q := range st.PromptQueue {
		where[q] = append(where[q], "prompt_queue")
	}
	for _, s := range st.SteeringQueue {
		where[s.Text] = append(where[s.Text], "steering_queue")
	}
	rejectedFull := 0
	for _, ev := range evs {
		if d := ev.GetPromptDropped(); d != nil {
			where[d.Text] = append(where[d.Text], "prompt_dropped")
		}
		if d := ev.GetSteeringDropped(); d != nil {
			where[d.Text] = append(where[d.Text], "steering_dropped")
		}
		if r := ev.GetSteeringReceived(); r != nil && r.Status == "rejected_full" {
			rejectedFull++
		}
	}
	for _, text := range p.accepted {
		if len(where[text]) != 1 {
			p.t.Errorf("accepted %q is found %d times: %q", text, len(where[text]), where[text])
		}
		delete(where, text)
	}
	for _, text := range p.refused {
		if len(where[text]) != 0 {
			p.t.Errorf("refused %q is found: %q", text, where[text])
		}
	}
	for text, places := range where {
		p.t.Errorf("%q was never accepted but is found: %q", text, places)
	}
	if rejectedFull != p.steersFull {
		p.t.Errorf("%d steering_received rejected_full for %d refused steers", rejectedFull, p.steersFull)
	}

	p.checkRequests(evs)
	// Each abort tells once; a prompt with if_busy interrupt or rollback
	// tells once when a run was in progress (the test cannot know whether
	// one was).
	if n := len(findAll(evs, "agent_abort")); n < p.aborts || n > p.aborts+p.interrupts {
		p.t.Errorf("%d agent_abort events for %d aborts and %d prompts that may interrupt a run", n, p.aborts, p.interrupts)
	}
	ended := map[string]int{}
	for _, ev := range findAll(evs, "agent_end") {
		ended[ev.GetAgentEnd().RunId]++
	}
	for _, ev := range findAll(evs, "agent_start") {
		if id := ev.GetAgentStart().RunId; ended[id] != 1 {
			p.t.Errorf("run %s ended %d times", id, ended[id])
		}
	}
	if p.t.Failed() {
		p.t.FailNow()
	}
}
