// The shapes of the public HTTP API (PROTOCOL §1 and §5) that the page reads.

/** A tool call inside an assistant message. */
export interface WireToolCall {
  id: string;
  name: string;
  args?: unknown;
}

/** One message of get_messages or message_committed. */
export interface WireMessage {
  role: string;
  content?: string;
  thinking?: string;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  is_error?: boolean;
  /** The summary that compaction put in place of older messages. */
  summary?: boolean;
  /** The images of a user message. */
  images?: WireImage[];
}

/** An image of a prompt or steering message: a data URL or an https URL. */
export interface WireImage {
  url: string;
  detail?: string;
}

/** A pending approval as get_state and approval_required carry it. */
export interface WireApproval {
  approval_id: string;
  tool: string;
  call_id: string;
  args?: unknown;
  hint?: string;
}

/** A pending ask_user question. */
export interface WireQuestion {
  ref: string;
  question: string;
  options?: string[] | null;
  call_id?: string;
}

/** The answer of GET /v1/sessions/{id} (get_state). */
export interface WireState {
  state: string;
  model: string;
  title?: string | null;
  run_id?: string | null;
  prompt_queue?: string[];
  steering_queue?: { ref: string; text: string }[];
  pending_approvals?: WireApproval[];
  pending_question?: WireQuestion | null;
  running_tools?: { call_id: string; name: string; immune?: boolean }[];
  message_count?: number;
  usage?: { total_tokens?: number };
  context?: { used?: number; window?: number | null; percent?: number | null };
  todos?: WireTodo[];
}

/** One entry of a session's todo list (todo_write). */
export interface WireTodo {
  text: string;
  /** pending, in_progress or done. */
  status: string;
}

/** One session of GET /v1/sessions. */
export interface WireSessionSummary {
  session: string;
  state: string;
  model?: string;
  message_count?: number;
  title?: string | null;
  updated_at?: string | null;
}

/** GET /v1/catalog. */
export interface WireCatalog {
  models: { name: string; context_window: number | null }[];
  default_model?: string;
  tools: { name: string; description?: string }[];
  plugins: string[];
  /** The named agents (session templates); absent from older servers. */
  agents?: { name: string; description?: string; model?: string; tools?: string[] }[];
  default_agent?: string;
}

/** One event (PROTOCOL §1 "Events"); fields depend on its type. */
export interface TackEvent {
  type: string;
  session?: string;
  seq: number;
  ts?: string;
  [field: string]: unknown;
}
