/**
 * The apiserver's audit log (cluster.ts, `auditLog`): every write, by whom and on what. The
 * deputies suite counts one identity's writes (the driver's) between two marks.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** One write the apiserver answered, as its audit event (Metadata level) has it. */
export interface Write {
  readonly verb: string;
  /** `resource` or `resource/subresource`, with its API group when it has one (`group/resource`). */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The HTTP status of the answer. */
  readonly code: number;
  /** When the apiserver answered (epoch ms). */
  readonly at: number;
  readonly userAgent?: string;
  readonly uri?: string;
  /** The apiserver's reason for refusing it (a non-2xx answer's message). */
  readonly message?: string;
}

interface AuditEvent {
  readonly stage?: string;
  readonly verb?: string;
  readonly user?: { readonly username?: string };
  readonly impersonatedUser?: { readonly username?: string };
  readonly userAgent?: string;
  readonly requestURI?: string;
  readonly objectRef?: { readonly resource?: string; readonly subresource?: string; readonly apiGroup?: string; readonly namespace?: string; readonly name?: string };
  readonly responseStatus?: { readonly code?: number; readonly reason?: string; readonly message?: string };
  readonly stageTimestamp?: string;
}

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export class AuditLog {
  constructor(readonly path: string) {}

  /** Where the log ends now: a mark to count from. */
  mark(): number {
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /** The writes made as `username` (the effective user: impersonated, or else authenticated) after `mark`. */
  writesSince(mark: number, username: string): Write[] {
    const text = this.readFrom(mark);
    const writes: Write[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) {
        continue;
      }
      let event: AuditEvent;
      try {
        event = JSON.parse(line) as AuditEvent;
      } catch {
        continue; // a line being written as we read: the next read has it whole
      }
      const user = event.impersonatedUser?.username ?? event.user?.username;
      if (user !== username || event.stage !== 'ResponseComplete' || !WRITES.has(event.verb ?? '')) {
        continue;
      }
      const ref = event.objectRef ?? {};
      const resource = `${ref.apiGroup ? `${ref.apiGroup}/` : ''}${ref.resource ?? '?'}${ref.subresource ? `/${ref.subresource}` : ''}`;
      writes.push({
        verb: event.verb!,
        resource,
        namespace: ref.namespace,
        name: ref.name,
        code: event.responseStatus?.code ?? 0,
        at: Date.parse(event.stageTimestamp ?? '') || 0,
        userAgent: event.userAgent,
        uri: event.requestURI,
        message: event.responseStatus?.message ?? event.responseStatus?.reason,
      });
    }
    return writes;
  }

  private readFrom(offset: number): string {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return '';
    }
    try {
      const size = statSync(this.path).size;
      if (size <= offset) {
        return '';
      }
      const buffer = Buffer.alloc(size - offset);
      let read = 0;
      while (read < buffer.length) {
        const n = readSync(fd, buffer, read, buffer.length - read, offset + read);
        if (n === 0) {
          break;
        }
        read += n;
      }
      // Only whole lines: a partial last line is left for the next read.
      const text = buffer.subarray(0, read).toString('utf8');
      return text.slice(0, text.lastIndexOf('\n') + 1);
    } finally {
      closeSync(fd);
    }
  }
}

/** Events (core or events.k8s.io): what the driver says, not what it changes; counted apart. */
export const isEvent = (w: Write) => /(^|\/)events$/.test(w.resource);

/** The writes that change objects (everything but Events). */
export const objectWrites = (writes: readonly Write[]) => writes.filter((w) => !isEvent(w));

/** Whether the apiserver carried the write out (2xx); a refused one (409 Conflict, 404) changed nothing. */
export const succeeded = (w: Write) => w.code >= 200 && w.code < 300;

/** One line for a list of writes: "update services tenant-a/web (200); create services cozy-metallb-iad/iad-… (201)". */
export function describeWrites(writes: readonly Write[], t0?: number): string {
  if (!writes.length) {
    return 'none';
  }
  return writes
    .map((w) => `${t0 !== undefined ? `+${w.at - t0} ms ` : ''}${w.verb} ${w.resource} ${w.namespace ? `${w.namespace}/` : ''}${w.name ?? ''} (${w.code}${succeeded(w) ? '' : `: ${w.message ?? w.uri}`})`)
    .join('; ');
}
