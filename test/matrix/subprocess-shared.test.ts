import { capabilityMatrix } from "./harness.js";
import { MATRIX_EXECUTORS } from "./executors.js";

capabilityMatrix(MATRIX_EXECUTORS["subprocess-shared"]);
