import { useCallback, useEffect, useState } from "preact/hooks";
import { type Api, ApiError, type WireFile } from "../api";

/** "1.5 KB" from a byte count. */
export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The session's workspace: its files (each downloadable), a picker that
 * attaches files, and the panel itself takes dropped files. The list is
 * read again whenever the session is idle at a new event (a run that
 * ended, however fast; the agent may have written) and after every
 * upload. idleAt is the seq of the last event while idle, else null: the
 * state alone may read idle before and after a run the page saw in one
 * render.
 */
export function FilesPanel(p: { api: Api; session: string; idleAt: number | null; onError: (msg: string) => void }) {
  const [files, setFiles] = useState<WireFile[]>([]);
  const [over, setOver] = useState(false);
  const { api, session, onError } = p;
  const refresh = useCallback(() => {
    api.listFiles(session).then(
      (r) => setFiles(r.files),
      (err) => onError(describe(err)),
    );
  }, [api, session, onError]);
  useEffect(() => {
    if (p.idleAt !== null) refresh();
  }, [refresh, p.idleAt]);

  const upload = async (list: FileList | null) => {
    if (!list) return;
    for (const f of Array.from(list)) {
      try {
        await api.putFile(session, f.name, f);
      } catch (err) {
        onError(describe(err));
      }
    }
    refresh();
  };
  const download = async (path: string) => {
    try {
      const blob = await api.getFile(session, path);
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = path.split("/").pop() || path;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      onError(describe(err));
    }
  };

  return (
    <details
      class={`files${over ? " files-over" : ""}`}
      data-testid="files"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        void upload(e.dataTransfer?.files ?? null);
      }}
    >
      <summary>Files ({files.length})</summary>
      <ul class="file-list" aria-label="Files in the workspace">
        {files.length === 0 && <li class="empty">No files yet: attach or drop some.</li>}
        {files.map((f) => (
          <li key={f.path} class="file" data-testid="file-item" data-path={f.path}>
            <button type="button" class="link" data-testid="file-download" aria-label={`Download ${f.path}`} onClick={() => void download(f.path)}>
              {f.path}
            </button>
            <span class="file-size">{formatSize(f.size)}</span>
          </li>
        ))}
      </ul>
      <label class="file-attach">
        Attach files
        <input type="file" multiple data-testid="file-upload" onChange={(e) => void upload((e.target as HTMLInputElement).files)} />
      </label>
    </details>
  );
}

function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return String(err);
}
