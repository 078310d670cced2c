/** Paths of the toolable test fixtures. */
import { fileURLToPath } from "node:url";

/** The Python (standard library only) toolable executable speaking the reference wire format. */
export const PYTOOL = fileURLToPath(new URL("../../fixtures/toolable/pytool.py", import.meta.url));
