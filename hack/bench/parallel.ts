/** The benches' load generators: `count` tasks run by `writers` concurrent loops. */
export async function inParallel(writers: number, count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < count) {
        await task(next++);
      }
    }),
  );
}
