export async function demo(): Promise<number> { return 0; }
