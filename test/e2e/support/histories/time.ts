/** Waiting and saying how long. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
