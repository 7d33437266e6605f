/**
 * Backfill: start an IMAP history backfill for a mailer that receives (config types with
 * "imap"), and follow jobs with their progress (GET /v1/imap/{mailerId}/history/{jobId}). The API
 * has no job listing: the jobs started from this tab are remembered in sessionStorage, and any
 * job can be looked up by its id (a start refused with 409 names the active job).
 */
import type { Mailyard } from '@mailyard/client/browser';
import type { BackfillStatusResponse } from '@mailyard/contracts';
import { useEffect, useState } from 'preact/hooks';
import { when } from '../format';
import type { PageProps } from '../shell';
import { ActionButton, Empty, ErrorBox, Show, useLoad } from '../ui';

const STORE = 'mailyard.backfillJobs';
type JobRef = { mailerId: string; jobId: string };
const saved = (): JobRef[] => JSON.parse(sessionStorage.getItem(STORE) ?? '[]');
const remember = (j: JobRef) =>
  sessionStorage.setItem(
    STORE,
    JSON.stringify([j, ...saved().filter((x) => x.jobId !== j.jobId)].slice(0, 20)),
  );

function Job({ api, job }: { api: Mailyard; job: JobRef }) {
  const [s, setS] = useState<BackfillStatusResponse>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const r = await api.backfill.status(job.mailerId, job.jobId);
        if (stop) return;
        setS(r);
        setError(undefined);
        if (r.status === 'pending' || r.status === 'processing') timer = setTimeout(poll, 2000);
      } catch (err) {
        if (!stop) setError(err);
      }
    };
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [api, job.mailerId, job.jobId]);
  return (
    <li>
      <code>{job.jobId}</code> on <code>{job.mailerId}</code>
      <ErrorBox error={error} />
      {s && (
        <div>
          <progress max={100} value={s.percent} aria-label={`Progress of ${job.jobId}`} /> {s.status}:{' '}
          {s.processed} of {s.target} ({s.percent}%) · started {when(s.startedAt)}
          {s.endedAt ? ` · ended ${when(s.endedAt)}` : ''}
          {s.failedReason ? <div class="error">{s.failedReason}</div> : null}
          {s.status === 'pending' || s.status === 'processing' ? (
            <ActionButton label="Abort" action={() => api.backfill.abort(job.mailerId, job.jobId)} />
          ) : null}
        </div>
      )}
    </li>
  );
}

export function Backfill({ api }: PageProps) {
  const mailers = useLoad(() => api.mailers.list({ pageSize: 50 }), [api]);
  const [jobs, setJobs] = useState<JobRef[]>(saved());
  const [error, setError] = useState<unknown>();
  const add = (j: JobRef) => {
    remember(j);
    setJobs(saved());
  };
  const start = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const mailerId = String(f.get('mailer') ?? '');
    const n = String(f.get('count') ?? '').trim();
    setError(undefined);
    try {
      const r = await api.backfill.start(mailerId, n ? { count: Number(n) } : {});
      add({ mailerId, jobId: r.jobId });
    } catch (err) {
      const active = (err as { envelope?: { jobId?: string } }).envelope?.jobId;
      if (active) add({ mailerId, jobId: active });
      setError(err);
    }
  };
  const lookup = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    add({ mailerId: String(f.get('mailer') ?? '').trim(), jobId: String(f.get('job') ?? '').trim() });
  };
  return (
    <>
      <h1>Backfill</h1>
      <Show load={mailers}>
        {(p) => {
          const imap = p.data.filter((m) => m.config_type.includes('imap'));
          return imap.length === 0 ? (
            <Empty>No IMAP mailer: create one (POST /v1/mailer/imap) to import a mailbox's history.</Empty>
          ) : (
            <form class="inline" onSubmit={start}>
              <label>
                Mailer{' '}
                <select name="mailer">
                  {imap.map((m) => (
                    <option key={m.mailer_id} value={m.mailer_id}>
                      {m.name} ({m.email})
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Messages (empty: all) <input name="count" type="number" min={0} />
              </label>
              <button type="submit">Start backfill</button>
            </form>
          );
        }}
      </Show>
      <ErrorBox error={error} />
      <form class="inline" onSubmit={lookup}>
        <label>
          Mailer id <input name="mailer" required />
        </label>
        <label>
          Job id <input name="job" required />
        </label>
        <button type="submit">Show job</button>
      </form>
      <h2>Jobs</h2>
      {jobs.length === 0 ? (
        <Empty>No job followed in this tab yet: start one above, or show one by its id.</Empty>
      ) : (
        <ul class="jobs">
          {jobs.map((j) => (
            <Job key={j.jobId} api={api} job={j} />
          ))}
        </ul>
      )}
    </>
  );
}
