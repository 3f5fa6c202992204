/** Ordinal string order: the same under every locale, so that a seed picks the same object everywhere. */
export const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
