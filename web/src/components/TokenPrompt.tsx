import { useState } from "preact/hooks";

/** Asks for the API token after a 401. */
export function TokenPrompt({ onToken, failed }: { onToken: (t: string) => void; failed: boolean }) {
  const [t, setT] = useState("");
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="token-h">
      <form
        class="card token"
        data-testid="token-prompt"
        onSubmit={(e) => {
          e.preventDefault();
          if (t.trim()) onToken(t.trim());
        }}
      >
        <h2 id="token-h">Token needed</h2>
        <p>This server asks for a token. It is kept in this tab only (session storage).</p>
        {failed && <p class="error">That token was not accepted.</p>}
        <input
          type="password"
          data-testid="token-input"
          aria-label="API token"
          autoFocus
          autoComplete="off"
          value={t}
          onInput={(e) => setT((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" data-testid="token-submit" aria-label="Use this token">
          Continue
        </button>
      </form>
    </div>
  );
}
