import { useEffect, useState } from "preact/hooks";
import type { Approval, Question } from "../reducer";
import { prettyArgs } from "./ToolCard";

/** The oldest pending approval: tool, arguments, hint; Approve, Always, Reject with a reason. */
export function ApprovalCard(p: {
  approval: Approval;
  more: number;
  onApprove: (always: boolean) => void;
  onReject: (reason: string) => void;
}) {
  const [reason, setReason] = useState("");
  const a = p.approval;
  useEffect(() => setReason(""), [a.approvalId]);
  return (
    <section class="card approval" data-testid="approval" data-approval-id={a.approvalId} aria-label={`Approval needed for ${a.tool}`}>
      <h3>
        Approve <code>{a.tool}</code>?
      </h3>
      {a.hint && <p class="hint">{a.hint}</p>}
      <pre class="args">{prettyArgs(a.args)}</pre>
      <div class="row">
        <button type="button" class="primary" data-testid="approve" aria-label={`Approve ${a.tool}`} onClick={() => p.onApprove(false)}>
          Approve
        </button>
        <button type="button" data-testid="approve-always" aria-label={`Always approve ${a.tool}`} onClick={() => p.onApprove(true)}>
          Always
        </button>
        <input
          type="text"
          class="grow"
          data-testid="reject-reason"
          aria-label="Reason for rejecting"
          placeholder="Reason (optional)"
          value={reason}
          onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") p.onReject(reason);
          }}
        />
        <button type="button" class="danger" data-testid="reject" aria-label={`Reject ${a.tool}`} onClick={() => p.onReject(reason)}>
          Reject
        </button>
      </div>
      {p.more > 0 && <p class="more">{p.more} more waiting</p>}
    </section>
  );
}

/**
 * A pending ask_user question. Each option is a button that answers at once;
 * the text field (answer-text) holds a free answer, prefilled with the first
 * option, and the Answer button (answer) sends what it holds.
 */
export function QuestionCard(p: { question: Question; onAnswer: (response: string) => void }) {
  const q = p.question;
  const [text, setText] = useState(q.options[0] ?? "");
  useEffect(() => setText(q.options[0] ?? ""), [q.ref]);
  const submit = (e: Event) => {
    e.preventDefault();
    const answer = text.trim() === "" && q.options.length > 0 ? q.options[0] : text;
    if (answer.trim() !== "") p.onAnswer(answer);
  };
  return (
    <section class="card question" data-testid="question" data-ref={q.ref} aria-label="A question for you">
      <h3>{q.question}</h3>
      {q.options.length > 0 && (
        <div class="row options" role="group" aria-label="Options">
          {q.options.map((o) => (
            <button type="button" key={o} data-testid="answer-option" data-option={o} aria-label={`Answer ${o}`} onClick={() => p.onAnswer(o)}>
              {o}
            </button>
          ))}
        </div>
      )}
      <form class="row" onSubmit={submit}>
        <input
          type="text"
          class="grow"
          data-testid="answer-text"
          aria-label="Your answer"
          placeholder="Your answer"
          value={text}
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" data-testid="answer" aria-label="Send the answer">
          Answer
        </button>
      </form>
    </section>
  );
}
