/**
 * A watch the bench can count on: started again whenever the apiserver ends
 * it (its timeout, a stall on a loaded machine) or it stays silent for
 * `silenceMs`. A watch started without a resourceVersion first lists every
 * object, so whatever changed while none was open is seen then: late rather
 * than never (a bench waiting out its bound on a dead stream measures nothing).
 */
import * as k8s from '@kubernetes/client-node';

export interface FollowedWatch {
  stop(): void;
}

export async function followWatch<T>(kubeConfig: k8s.KubeConfig, path: string, onObject: (object: T) => void, silenceMs = 30_000): Promise<FollowedWatch> {
  let stopped = false;
  let current: AbortController | undefined;
  let lastEventAt = performance.now();
  const restart = (): void => {
    if (!stopped) {
      setTimeout(() => void start().catch(restart), Math.min(500, silenceMs));
    }
  };
  const start = async (): Promise<void> => {
    lastEventAt = performance.now();
    current = await new k8s.Watch(kubeConfig).watch(path, {}, (_phase: string, object: T) => {
      lastEventAt = performance.now();
      onObject(object);
    }, restart);
  };
  await start();
  const silence = setInterval(() => {
    if (performance.now() - lastEventAt > silenceMs) {
      lastEventAt = performance.now();
      current?.abort(); // its done callback starts the next one
    }
  }, silenceMs / 3);
  silence.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(silence);
      current?.abort();
    },
  };
}
